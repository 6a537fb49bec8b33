/** An answer as it was sent: its status, content type and body (sealed by the caller: opaque here). */
export interface RecordedAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** Who asks for a key: its id (a hash of the caller's scope and key) and the request it was sent with. */
export interface IdempotencyClaim {
  keyId: string;
  /** The partner whose key it is: what its answers take up is counted per partner ({@link IdempotencyStore.keptBytes}). */
  partnerId: string;
  /** A hash of the request (method, path, query and body): a key names one request only. */
  fingerprint: string;
  /** Milliseconds since 1970: when the key was first used, and when it is forgotten. */
  now: number;
  expiresAt: number;
  /** A new random id for the run this claim would start (kept with the claim; a resumed run gets its own back). */
  runId: string;
}

/**
 * What a claim found:
 * - `new`: the key was free (or forgotten); this process runs the request and owns the key until
 *   it {@link IdempotencyStore.answer}s or {@link IdempotencyStore.release}s it;
 * - `resumed`: the run that held the key died before answering, or released it unanswered; this
 *   claim owns it now and runs it again (the handlers find what the earlier run wrote under its ids);
 *   `ended` when it was released (its process answered and runs nothing of it any more), false when
 *   its process died (something of it may still be under way: a charge sent before the crash);
 * - `answered`: the request was answered; the answer is sent again;
 * - `running`: another request with this key is being run, by a process still alive;
 * - `mismatch`: the key was used for another request.
 * `startedAt` (ms since 1970) and `runId` are those of the run that owns the key: a `resumed` claim's
 * are those of the run it resumes (the ids a run makes derive from them, so a key's writes are
 * always found again, whatever answer was not kept).
 */
export type ClaimOutcome =
  | { kind: 'new'; startedAt: number; runId: string }
  | { kind: 'resumed'; startedAt: number; runId: string; ended: boolean }
  | { kind: 'answered'; answer: RecordedAnswer }
  | { kind: 'running' }
  | { kind: 'mismatch' };

/**
 * The requests sent with an `Idempotency-Key` and their answers, kept beside the event log in the
 * same store (so every process of the service sees them, and a crash loses none once answered).
 *
 * Promises: of any number of claims of one key at once, in any process, one alone is `new` or
 * `resumed`; a claim reads the key's state and takes it in one step, so the claims of an answered
 * key are all `answered`, however many come at once, and `running` means its run has not answered;
 * a claim is kept (with its start and run id) until its key expires, across a crash of its process,
 * and is `resumed` only once that process is gone or has released it; an answer is kept until its
 * key expires and is then forgotten (`purge` deletes it; a claim after the expiry is `new`). Leaves
 * out: what an answer means (its body is sealed by the caller).
 */
export abstract class IdempotencyStore {
  abstract claim(claim: IdempotencyClaim): Promise<ClaimOutcome>;

  /** Whether the key is live (claimed or answered, not expired by `now`): read only, nothing claimed. */
  abstract holds(keyId: string, now: number): Promise<boolean>;

  /** Keeps the answer of a request this process claimed; durable once the promise resolves. */
  abstract answer(keyId: string, answer: RecordedAnswer): Promise<void>;

  /**
   * Frees a key this process claimed without keeping an answer: the next claim of the same request
   * resumes its run (runs the request again, under the same run id).
   */
  abstract release(keyId: string): Promise<void>;

  /**
   * Forgets the keys expired by `now`; how many were forgotten. Without `world`, every partner's
   * but test clocks' worlds' (a partner id holding `CLOCK_SEPARATOR`), whose keys expire by their
   * clock's time, not real time; with it, that one world's keys (`now` its clock's time).
   */
  abstract purge(now: number, world?: string): Promise<number>;

  /**
   * What the kept keys and answers take up, in bytes, per partner: each answer's body and a row's
   * overhead ({@link KEPT_ROW_BYTES}). Exact where one process writes the store; where several do, it
   * is this process's view, read again from the store every few seconds and counting its own answers
   * at once. Read before keeping an answer (the partner's bound), and by the metrics.
   */
  abstract keptBytes(): ReadonlyMap<string, number>;

  /** Starts what the first claim would start (a write thread): a serving process calls it as it starts. */
  warmUp(): void {}

  abstract close(): Promise<void>;
}

/** What a kept key costs beside its answer's body: its ids, hashes and times, roughly, as the stores keep them. */
export const KEPT_ROW_BYTES = 160;

/** A request run under an `Idempotency-Key`, as the handlers see it: what they make is named after it. */
export interface IdempotentRun {
  keyId: string;
  /** When the run that owns the key first claimed it, and its id ({@link ClaimOutcome}). */
  startedAt: number;
  runId: string;
  /** A run again of a request whose process died before answering, or that released its key unanswered. */
  resumed: boolean;
  /** Resumed from a run that released its key (it answered a 5xx or 409, and nothing of it runs any more). */
  ended: boolean;
}
