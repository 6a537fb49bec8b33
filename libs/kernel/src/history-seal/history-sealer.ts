import type { KeyObject } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../ports/clock.port';
import type { EventStore } from '../ports/event-store.port';
import { EventSeal, SealStore, SignedCheckpoint } from '../ports/seal-store.port';
import { Checkpoint, checkpointHash, eventHash, merkleRoot, signCheckpoint, STREAM_START, streamLink } from './seal';

/** The most events one checkpoint seals: a proof of one is its tree's path, and reading it reads them all. */
export const MAX_CHECKPOINT_EVENTS = 4096;
/** Events hashed between two yields to the event loop: an embedded store answers synchronously, and requests wait meanwhile. */
const EVENTS_A_TURN = 256;

/**
 * Seals the log's events in log order: each event's hash and stream link, then the run of them under
 * a new checkpoint, named after the one before, signed, and written with its seals at once. What a
 * second sealer wrote first is not written again (the store refuses its number).
 */
export class HistorySealer {
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
    const links = new Map<string, Buffer>([...heads].map(([streamId, head]) => [streamId, Buffer.from(head.link, 'hex')]));
    const number = (last?.number ?? 0) + 1;
    const leaves: Buffer[] = [];
    const sealed: EventSeal[] = [];
    for (const [index, event] of events.entries()) {
      if (index > 0 && index % EVENTS_A_TURN === 0) await nextTurn();
      const hash = eventHash(event);
      const link = streamLink(links.get(event.streamId) ?? STREAM_START, hash);
      links.set(event.streamId, link);
      leaves.push(link);
      const { position, streamId, revision } = event;
      sealed.push({ position, streamId, revision, hash: hash.toString('hex'), link: link.toString('hex'), checkpoint: number, index });
    }
    const checkpoint: Checkpoint = {
      number,
      previous: last ? checkpointHash(last) : null,
      fromPosition: events[0].position,
      toPosition: events[events.length - 1].position,
      count: events.length,
      root: merkleRoot(leaves).toString('hex'),
      sealedAt: this.clock.now().toISOString(),
    };
    const signed = { ...checkpoint, signature: signCheckpoint(checkpoint, this.signingKey) };
    await this.seals.write(signed, sealed);
    return signed;
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
