import { ACCOUNTS_ERASURE_EVENTS, ACCOUNTS_PERSONAL_FIELDS } from '@deals/accounts';
import { BULK_JOBS_PERSONAL_FIELDS } from '@deals/bulk-jobs';
import type { ErasureEvents, PersonalFields } from '@deals/kernel';
import { MESSAGING_PERSONAL_FIELDS } from '@deals/messaging';
import { PARTNER_SITE_PERSONAL_FIELDS } from '@deals/partner-site';
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
 * log under its subject's key: a user, a reseller sale's buyer, a member of the partner site), and
 * the events that erase a subject.
 */
export const PERSONAL_DATA: { fields: PersonalFields; erasures: ErasureEvents } = {
  fields: merged(
    ACCOUNTS_PERSONAL_FIELDS,
    PURCHASES_PERSONAL_FIELDS,
    PARTNER_SITE_PERSONAL_FIELDS,
    MESSAGING_PERSONAL_FIELDS,
    BULK_JOBS_PERSONAL_FIELDS,
  ),
  erasures: merged(ACCOUNTS_ERASURE_EVENTS, PURCHASES_ERASURE_EVENTS),
};

/**
 * Fields whose names look like personal data but are kept in clear in the log, each with the
 * reason: `EventType.path.to.field` (an entry covers what is under it). A test walks every event
 * type's fields and fails on one that looks personal and is neither declared nor listed here.
 */
export const KEPT_IN_CLEAR: ReadonlyMap<string, string> = new Map([
  ['DealListed.deal', "the catalogue: a deal, its merchant and the merchant's locations, no person"],
  ['DealRevised.changes', "the catalogue: a deal, its merchant and the merchant's locations, no person"],
  ['RegionListed.region', 'the catalogue: a region, its city and postal codes, no person'],
  ['RegionRevised.changes', 'the catalogue: a region, its city and postal codes, no person'],
  ['SubscriptionStarted.regionName', "the catalogue's name of the region subscribed to"],
  ['SubscriptionStarted.zip', 'the five digits that choose the region of the daily email, kept as given (docs/personal-data.md)'],
  ['PartnerRegistered.name', 'a partner is a business: its name'],
  ['PartnerRegistered.username', "a partner's v3 user name: a business's credential, not a person's"],
  ['PartnerApiKeyIssued.name', "the partner's label of one of its keys"],
  ['PartnerApiKeyRenamed.name', "the partner's label of one of its keys"],
  ['TestClockCreated.name', "a sandbox's label of its test clock"],
  ['CardStored.zipCode', 'the billing zip code the processor verifies a card with, kept as given (docs/personal-data.md)'],
  ['CardRenewed.zipCode', 'the billing zip code the processor verifies a card with, kept as given (docs/personal-data.md)'],
  ['UnitsHeld.buyer', "ids only: the partner's and its user's, for the per-user limit"],
  ['UnitsSold.buyer', "ids only: the partner's and its user's, for the per-user limit"],
  ['TestClockJobArmed.job.data', "a scheduled job's ids and instants"],
  [
    'BulkJobChunkProcessed.results',
    "a bulk job's results: the partner's references (identifiers, documented as never personal data), ids, statuses and error bodies",
  ],
]);
