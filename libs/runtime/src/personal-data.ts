import { ACCOUNTS_ERASURE_EVENTS, ACCOUNTS_PERSONAL_FIELDS } from '@deals/accounts';
import type { ErasureEvents, PersonalFields } from '@deals/kernel';
import { PURCHASES_ERASURE_EVENTS, PURCHASES_PERSONAL_FIELDS } from '@deals/purchasing';

/** One map of several contexts' declarations; an event type declared twice is a mistake, refused. */
function merged<V>(...maps: ReadonlyArray<ReadonlyMap<string, V>>): ReadonlyMap<string, V> {
  const all = new Map<string, V>();
  for (const map of maps)
    for (const [type, value] of map) {
      if (all.has(type)) throw new Error(`${type} is declared twice`);
      all.set(type, value);
    }
  return all;
}

/**
 * Every event type that holds personal data, with whose it is and where (each value encrypted in the
 * log under its subject's key: a user, a reseller sale's buyer), and the events that erase a subject.
 */
export const PERSONAL_DATA: { fields: PersonalFields; erasures: ErasureEvents } = {
  fields: merged(ACCOUNTS_PERSONAL_FIELDS, PURCHASES_PERSONAL_FIELDS),
  erasures: merged(ACCOUNTS_ERASURE_EVENTS, PURCHASES_ERASURE_EVENTS),
};

