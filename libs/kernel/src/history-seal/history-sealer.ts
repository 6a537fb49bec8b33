import type { KeyObject } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../ports/clock.port';
import type { EventStore } from '../ports/event-store.port';
import { SealStore, SignedCheckpoint } from '../ports/seal-store.port';
import { eventHash } from './seal';
import { HashedEvent, MAX_CHECKPOINT_EVENTS, sealRun } from './seal-run';

/** Events hashed between two yields to the event loop: an embedded store answers synchronously, and requests wait meanwhile. */
const EVENTS_A_TURN = 256;

/** What seals the log: everything not sealed yet, checkpoint after checkpoint, until `stopping` says so. */
export interface LogSealer {
  /** Seals what the log holds now; how many checkpoints were written. `stopping` ends it between two checkpoints. */
  sealAll(stopping?: () => boolean): Promise<number>;
  close?(): Promise<void>;
}

/**
 * Seals the log's events in log order: each event's hash and stream link, then the run of them under
 * a new checkpoint, named after the one before, signed, and written with its seals at once. What a
 * second sealer wrote first is not written again (the store refuses its number).
 */
export class HistorySealer implements LogSealer {
  constructor(
    private readonly log: EventStore,
    private readonly seals: SealStore,
    private readonly clock: Clock,
    private readonly signingKey: KeyObject,
  ) {}

  /** Seals the events after the last checkpoint, up to {@link MAX_CHECKPOINT_EVENTS}; the checkpoint written, or null when none were new. */
  async sealNext(): Promise<SignedCheckpoint | null> {
    const last = await this.seals.lastCheckpoint();
    const events = await this.log.readAll({ after: last?.toPosition ?? null, maxCount: MAX_CHECKPOINT_EVENTS });
    if (events.length === 0) return null;
    const heads = await this.seals.streamLinks([...new Set(events.map((e) => e.streamId))]);
    const hashed: HashedEvent[] = [];
    for (const [index, event] of events.entries()) {
      if (index > 0 && index % EVENTS_A_TURN === 0) await nextTurn();
      const { position, streamId, revision } = event;
      hashed.push({ position, streamId, revision, hash: eventHash(event) });
    }
    const links = new Map([...heads].map(([streamId, head]) => [streamId, Buffer.from(head.link, 'hex')]));
    const { checkpoint, seals } = sealRun(last, hashed, links, this.clock.now().toISOString(), this.signingKey);
    await this.seals.write(checkpoint, seals);
    return checkpoint;
  }

  /**
   * Seals everything the log holds now, checkpoint after checkpoint, yielding between them; how
   * many were written. `stopping` ends it between two checkpoints (the rest waits for the next round).
   */
  async sealAll(stopping: () => boolean = () => false): Promise<number> {
    let written = 0;
    while (!stopping() && (await this.sealNext())) {
      written++;
      await nextTurn();
    }
    return written;
  }
}
