import type { ViewDocument, ViewFilter } from '@deals/kernel';

type Key = string;
const keyOf = (value: unknown): Key | null =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? `${typeof value}:${value}` : null;

/**
 * Equality lookups over an in-memory collection on the fields its projection declared as indexed
 * (array fields index each element, as MongoDB's multikey indexes do). The planner narrows a query
 * to candidates with the most selective indexed equality or `$in`; mingo then checks the whole
 * filter on those only.
 */
export class CollectionIndex {
  private readonly byField = new Map<string, Map<Key, Set<string>>>();

  constructor(fields: string[]) {
    for (const field of fields) if (field !== '_id') this.byField.set(field, new Map());
  }

  get fields(): string[] {
    return [...this.byField.keys()];
  }

  update(before: ViewDocument | undefined, after: ViewDocument): void {
    for (const [field, index] of this.byField) {
      if (before) for (const key of keysAt(before, field)) index.get(key)?.delete(before._id);
      for (const key of keysAt(after, field)) {
        let ids = index.get(key);
        if (!ids) index.set(key, (ids = new Set()));
        ids.add(after._id);
      }
    }
  }

  /** Candidate ids for `filter`, or null when no index applies (scan everything). */
  candidates(filter: ViewFilter): Set<string> | string[] | null {
    const id = equalityKeys(filter._id, (v) => (typeof v === 'string' ? v : null));
    if (id) return id;
    let best: Set<string> | null = null;
    for (const [field, index] of this.byField) {
      const keys = equalityKeys(filter[field], keyOf);
      if (!keys) continue;
      const found = new Set<string>();
      for (const key of keys) for (const docId of index.get(key) ?? []) found.add(docId);
      if (!best || found.size < best.size) best = found;
    }
    return best;
  }
}

function equalityKeys<K>(condition: unknown, key: (value: unknown) => K | null): K[] | null {
  if (condition === undefined) return null;
  const direct = key(condition);
  if (direct !== null) return [direct];
  if (condition && typeof condition === 'object' && !Array.isArray(condition)) {
    const ops = condition as Record<string, unknown>;
    if ('$eq' in ops) {
      const k = key(ops.$eq);
      return k === null ? null : [k];
    }
    if (Array.isArray(ops.$in)) {
      const keys = ops.$in.map(key);
      return keys.every((k) => k !== null) ? (keys as K[]) : null;
    }
  }
  return null;
}

function keysAt(doc: ViewDocument, field: string): Key[] {
  let value: unknown = doc;
  for (const part of field.split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
  const values = Array.isArray(value) ? value : [value];
  return values.map(keyOf).filter((k): k is Key => k !== null);
}
