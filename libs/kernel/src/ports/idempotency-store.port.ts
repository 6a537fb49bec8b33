/** An answer as it was sent: its status, content type and body (sealed by the caller: opaque here). */
export interface RecordedAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** Who asks for a key: its id (a hash of the caller's scope and key) and the request it was sent with. */
export interface IdempotencyClaim {
  keyId: string;
  /** A hash of the request (method, path, query and body): a key names one request only. */
  fingerprint: string;
  /** Milliseconds since 1970: when the key was first used, and when it is forgotten. */
  now: number;
  expiresAt: number;
}

/**
 * What a claim found:
 * - `new`: the key was free (or forgotten); this process runs the request and owns the key until
 *   it {@link IdempotencyStore.answer}s or {@link IdempotencyStore.abandon}s it;
 * - `resumed`: the process that ran the request died before answering; this one owns it now and
 *   runs it again (the handlers find what the first run wrote under the key and finish it);
 * - `answered`: the request was answered; the answer is sent again;
 * - `running`: another request with this key is being run, by a process still alive;
 * - `mismatch`: the key was used for another request.
 */
export type ClaimOutcome =
  { kind: 'new' } | { kind: 'resumed' } | { kind: 'answered'; answer: RecordedAnswer } | { kind: 'running' } | { kind: 'mismatch' };

/**
 * The requests sent with an `Idempotency-Key` and their answers, kept beside the event log in the
 * same store (so every process of the service sees them, and a crash loses none once answered).
 *
 * Promises: of any number of claims of one key at once, in any process, one alone is `new` or
 * `resumed`; an answer is kept until its key expires and is then forgotten (`purge` deletes it; a
 * claim after the expiry is `new`); a claim is `resumed` only when the process that held the key
 * is gone. Leaves out: what an answer means (its body is sealed by the caller).
 */
export abstract class IdempotencyStore {
  abstract claim(claim: IdempotencyClaim): Promise<ClaimOutcome>;

  /** Keeps the answer of a request this process claimed; durable once the promise resolves. */
  abstract answer(keyId: string, answer: RecordedAnswer): Promise<void>;

  /** Frees a key this process claimed without keeping an answer (a retry runs the request again). */
  abstract abandon(keyId: string): Promise<void>;

  /** Forgets the keys expired by `now`; how many were forgotten. */
  abstract purge(now: number): Promise<number>;

  abstract close(): Promise<void>;
}
