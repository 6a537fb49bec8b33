import type { Checkpoint } from '../history-seal/seal';
import type { LogPosition } from './event-store.port';

/** One event's seal: its own hash and its link in its stream's chain (hex), under checkpoint `checkpoint` at `index`. */
export interface EventSeal {
  position: LogPosition;
  streamId: string;
  revision: number;
  hash: string;
  link: string;
  checkpoint: number;
  /** Its place among its checkpoint's events (0, 1, ...): its leaf in the checkpoint's tree. */
  index: number;
}

/** A checkpoint with the service's Ed25519 signature of its text (base64). */
export interface SignedCheckpoint extends Checkpoint {
  signature: string;
}

/**
 * Where the event log's seals and signed checkpoints are kept, beside the log in the same store.
 *
 * Promises: a checkpoint is written with the seals of all its events at once, or not at all; two
 * sealers at once never both write checkpoint N (the second is refused with {@link SealRaced}), so
 * the checkpoints form one line. A process that seals says so ({@link declareSealer}) for as long as
 * it runs, and every process can ask whether one does ({@link sealerRunning}): what is not sealed
 * while none runs was left so. Leaves out: computing hashes (the sealer's), the log's own events.
 */
export abstract class SealStore {
  /** The newest checkpoint, if any (its `toPosition` is where sealing goes on from). */
  abstract lastCheckpoint(): Promise<SignedCheckpoint | null>;

  /** The newest link of each stream named, from its seals (a stream with none is left out). */
  abstract streamLinks(streamIds: readonly string[]): Promise<Map<string, { revision: number; link: string }>>;

  /** Writes a checkpoint and its events' seals together; {@link SealRaced} when its number is taken. */
  abstract write(checkpoint: SignedCheckpoint, seals: readonly EventSeal[]): Promise<void>;

  /** Checkpoints from number `from` on, up to `limit`, in order. */
  abstract checkpoints(from: number, limit: number): Promise<SignedCheckpoint[]>;

  /** The seals of one checkpoint, in order (its tree's leaves). */
  abstract sealsOf(checkpoint: number): Promise<EventSeal[]>;

  /** The seal of a stream's event at `revision`, if sealed. */
  abstract sealOf(streamId: string, revision: number): Promise<EventSeal | null>;

  /** A stream's seals, in order. */
  abstract sealsOfStream(streamId: string): Promise<EventSeal[]>;

  /**
   * Says, to every process that asks {@link sealerRunning}, that this process seals the log: until
   * it closes this store, or dies. Saying it again is harmless (and says it anew after a lost
   * connection).
   */
  abstract declareSealer(): Promise<void>;

  /** Whether a process that declared itself the sealer (this one or another) is running now. */
  abstract sealerRunning(): Promise<boolean>;

  /** Closes the store; a sealer declared by this process stops being one. */
  abstract close(): Promise<void>;
}

/** Another sealer wrote the checkpoint first: this one reads the head again and goes on from there. */
export class SealRaced extends Error {
  constructor(readonly checkpoint: number) {
    super(`checkpoint ${checkpoint} was written by another sealer`);
    this.name = 'SealRaced';
  }
}
