import type { ViewDocument, ViewFilter } from '@deals/kernel';
import { Query } from 'mingo';
import { geoContext } from '../mingo/geo-within.operator';

type Conditions = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Conditions =>
  value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;

/** Whether `$geoWithin` appears anywhere in a condition. */
function usesGeo(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(usesGeo);
  return isPlainObject(value) && Object.entries(value).some(([key, inner]) => key === '$geoWithin' || usesGeo(inner));
}

/**
 * A filter the server runs, and what is left to test here, or `local: null` when the server runs it
 * all. Every document the filter matches matches `server`; `local` tells them apart.
 */
export interface SplitFilter {
  server: ViewFilter;
  local: ((doc: ViewDocument) => boolean) | null;
  /** The top-level fields `local` reads (a projection that keeps them keeps all it needs), or null when not known. */
  localFields: string[] | null;
}

/** The top-level fields a filter reads, or null where an operator reads the document otherwise (`$expr`, `$where`). */
function fieldsOf(filter: Conditions, into: Set<string>): boolean {
  for (const [key, value] of Object.entries(filter)) {
    if (!key.startsWith('$')) into.add(key.split('.')[0]);
    else if (['$and', '$or', '$nor'].includes(key) && Array.isArray(value)) {
      if (!value.every((item) => isPlainObject(item) && fieldsOf(item, into))) return false;
    } else if (key !== '$comment') return false;
  }
  return true;
}

/**
 * `$geoWithin` (`$centerSphere`) answered in this process, by mingo with the same operator as the
 * embedded and PostgreSQL stores, the rest of the filter by the server. FerretDB has neither the
 * operator nor 2dsphere indexes, so the adapter keeps to what both servers do. The conditions that
 * are conjuncts of the filter (top level, `$and`) and use no `$geoWithin` go to the server; the
 * others are tested here.
 */
export function splitGeo(filter: ViewFilter): SplitFilter {
  if (!usesGeo(filter)) return { server: filter, local: null, localFields: [] };
  const server: Conditions[] = [];
  const local: Conditions[] = [];
  const split = (conditions: Conditions) => {
    for (const [key, value] of Object.entries(conditions)) {
      if (!usesGeo(value)) server.push({ [key]: value });
      else if (key === '$and' && Array.isArray(value) && value.every(isPlainObject)) value.forEach(split);
      else if (!key.startsWith('$') && isPlainObject(value) && '$geoWithin' in value) {
        const { $geoWithin, ...others } = value;
        local.push({ [key]: { $geoWithin } });
        if (Object.keys(others).length) (usesGeo(others) ? local : server).push({ [key]: others });
      } else local.push({ [key]: value });
    }
  };
  split(filter);
  const query = new Query(local.length === 1 ? local[0] : { $and: local }, { context: geoContext });
  const fields = new Set<string>();
  return {
    server: server.length === 0 ? {} : server.length === 1 ? server[0] : { $and: server },
    local: (doc) => query.test(doc as unknown as Record<string, unknown>),
    localFields: local.every((conditions) => fieldsOf(conditions, fields)) ? [...fields] : null,
  };
}
