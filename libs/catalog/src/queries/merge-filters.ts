import type { ViewFilter } from '@deals/kernel';

const isOperatorObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).every((k) => k.startsWith('$'));

/**
 * ANDs filters into one object, keeping fields at the top level (where view-store indexes can use
 * them): operators on the same field merge when they do not collide; anything else goes into `$and`.
 */
export function mergeFilters(parts: ViewFilter[]): ViewFilter {
  const merged: ViewFilter = {};
  const rest: ViewFilter[] = [];
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      const existing = merged[key];
      if (existing === undefined) merged[key] = value;
      else if (isOperatorObject(existing) && isOperatorObject(value) && Object.keys(value).every((op) => !(op in existing))) {
        merged[key] = { ...existing, ...value };
      } else rest.push({ [key]: value });
    }
  }
  if (rest.length) merged.$and = [...((merged.$and as ViewFilter[] | undefined) ?? []), ...rest];
  return merged;
}
