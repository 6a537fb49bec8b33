import { freezeJson, ViewDocument } from '@deals/kernel';

/**
 * A document parsed from its JSON, deep-frozen by `freezeJson`, which then knows its large parts
 * as checked: a later document of a projection that reuses them is not walked through them again.
 * Parsed JSON always passes, but for text `JSON.stringify` never writes (a `-0`): that is frozen as
 * it is.
 */
export function parseFrozen(body: string): ViewDocument {
  const doc = JSON.parse(body) as ViewDocument;
  if (!freezeJson(doc)) deepFreeze(doc);
  return doc;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
