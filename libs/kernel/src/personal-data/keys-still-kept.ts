import type { PersonalDataEventStore } from './personal-data-event-store';

/** Subjects one question to the key store covers. */
const ASKED_AT_ONCE = 500;

/** A subject whose erasure the log records, and when. */
export interface RecordedErasure {
  subject: string;
  erasedAt: string;
}

/**
 * Deletes the key of each subject of `erasures` (in their order) whose key is still kept: a stop
 * between an erasure's record and its key's deletion, or a keys file restored from before an
 * erasure. The key store is asked once for many subjects at a time: a start reads every erasure
 * ever recorded. How many keys it deleted.
 */
export async function eraseKeysStillKept(personalData: PersonalDataEventStore, erasures: readonly RecordedErasure[]): Promise<number> {
  const erasedAt = new Map(erasures.map((erasure) => [erasure.subject, erasure.erasedAt]));
  let finished = 0;
  for (let from = 0; from < erasures.length; from += ASKED_AT_ONCE) {
    const kept = await personalData.keptOf(erasures.slice(from, from + ASKED_AT_ONCE).map((erasure) => erasure.subject));
    for (const subject of kept) await personalData.erase(subject, new Date(erasedAt.get(subject)!));
    finished += kept.length;
  }
  return finished;
}
