import type { KeyObject } from 'node:crypto';
import type { EventStore, LogPosition } from '../ports/event-store.port';
import { countAfter } from '../ports/event-store.capabilities';
import { SealStore, SignedCheckpoint } from '../ports/seal-store.port';
import { checkpointHash, checkpointSigned, eventHash, merkleRoot, STREAM_START, streamLink } from './seal';

/** The first thing that does not match: an event (where it is, or was) or a checkpoint, and what is wrong. */
export interface SealFailure {
  checkpoint: number;
  /** The event's position (null: the checkpoint itself). */
  position: LogPosition | null;
  streamId: string | null;
  revision: number | null;
  problem: string;
}

export interface HistoryVerification {
  verified: boolean;
  /** Events checked against their seals. */
  events: number;
  checkpoints: number;
  /** Events after the last checkpoint: not sealed yet, so not checked (none counted with `to`). */
  unsealed: number;
  failure: SealFailure | null;
}

export interface VerifyOptions {
  /** Checks the checkpoints holding events from this position on (from the first when not given). */
  from?: LogPosition;
  /** ... up to the one holding this position (to the last when not given). */
  to?: LogPosition;
  onProgress?: (events: number) => void;
}

const PAGE = 100;

/**
 * Checks the log against its seals: each checkpoint's signature (the service's key) and its link to
 * the one before; then each of its events, in log order, against its seal: there (not removed, none
 * added between), where it was (its stream and revision), unchanged (its hash), following its
 * stream's event before it (revision and chain link); and the checkpoint's Merkle root over them.
 * Stops at the first that does not match and names it.
 */
export async function verifyHistory(
  log: EventStore,
  seals: SealStore,
  publicKey: KeyObject,
  options: VerifyOptions = {},
): Promise<HistoryVerification> {
  const result: HistoryVerification = { verified: true, events: 0, checkpoints: 0, unsealed: 0, failure: null };
  const failed = (failure: SealFailure): HistoryVerification => ({ ...result, verified: false, failure });
  const heads = new Map<string, { revision: number; link: Buffer }>();
  let previous: SignedCheckpoint | null = null;
  for (let number = 1; ;) {
    const page = await seals.checkpoints(number, PAGE);
    if (page.length === 0) break;
    number += page.length;
    for (const checkpoint of page) {
      const whole = (problem: string) => failed({ checkpoint: checkpoint.number, position: null, streamId: null, revision: null, problem });
      if (checkpoint.number !== (previous?.number ?? 0) + 1) return whole(`is not the next checkpoint after ${previous?.number ?? 'none'}`);
      if (!checkpointSigned(checkpoint, checkpoint.signature, publicKey)) return whole('is not signed by the service’s key');
      if (checkpoint.previous !== (previous ? checkpointHash(previous) : null))
        return whole(`does not name checkpoint ${previous?.number ?? 'none'} before it (it was changed, or one was removed)`);
      const skipped = options.from !== undefined && checkpoint.toPosition < options.from;
      const beyond = options.to !== undefined && checkpoint.fromPosition > options.to;
      if (beyond) return { ...result, unsealed: 0 };
      if (!skipped) {
        const failure = await checkEvents(log, seals, checkpoint, previous, heads, options.from !== undefined, () => {
          result.events++;
          options.onProgress?.(result.events);
        });
        if (failure) return failed(failure);
        result.checkpoints++;
      }
      previous = checkpoint;
    }
  }
  if (options.to === undefined) result.unsealed = await countAfter(log, previous?.toPosition ?? null);
  return result;
}

/** One checkpoint's events against their seals and its root; the first failure, or null. */
async function checkEvents(
  log: EventStore,
  seals: SealStore,
  checkpoint: SignedCheckpoint,
  previous: SignedCheckpoint | null,
  heads: Map<string, { revision: number; link: Buffer }>,
  /** Verifying from the middle of the log: a stream's link before the first checkpoint checked is read from its seal. */
  fromMiddle: boolean,
  checked: () => void,
): Promise<SealFailure | null> {
  const sealed = await seals.sealsOf(checkpoint.number);
  const events = await log.readAll({ after: previous?.toPosition ?? null, maxCount: checkpoint.count + 1 });
  const at = (position: LogPosition | null, streamId: string | null, revision: number | null, problem: string): SealFailure => ({
    checkpoint: checkpoint.number,
    position,
    streamId,
    revision,
    problem,
  });
  if (sealed.length !== checkpoint.count) return at(null, null, null, `holds ${sealed.length} seals of its ${checkpoint.count} events`);
  if (sealed[0]?.position !== checkpoint.fromPosition || sealed[sealed.length - 1]?.position !== checkpoint.toPosition)
    return at(null, null, null, 'its seals do not run from its first position to its last');
  const leaves: Buffer[] = [];
  let i = 0;
  for (const seal of sealed) {
    const event = events[i];
    if (!event || event.position > seal.position)
      return at(seal.position, seal.streamId, seal.revision, 'was removed: it was sealed and is no longer in the log');
    if (event.position < seal.position)
      return at(event.position, event.streamId, event.revision, 'was added: it stands among sealed events and was never sealed');
    i++;
    if (event.streamId !== seal.streamId || event.revision !== seal.revision)
      return at(
        event.position,
        event.streamId,
        event.revision,
        `was moved: sealed here as ${seal.streamId} revision ${seal.revision}, now ${event.streamId} revision ${event.revision}`,
      );
    const hash = eventHash(event);
    if (hash.toString('hex') !== seal.hash)
      return at(event.position, event.streamId, event.revision, 'was changed: its content does not match its seal');
    let head = heads.get(event.streamId);
    if (!head && event.revision > 0 && fromMiddle) {
      // Verifying from the middle of the log: the stream's seal before it, where its chain goes on from.
      const before = await seals.sealOf(event.streamId, event.revision - 1);
      if (before) head = { revision: before.revision, link: Buffer.from(before.link, 'hex') };
    }
    const expected = head ? head.revision + 1 : 0;
    if (event.revision !== expected)
      return at(event.position, event.streamId, event.revision, `does not follow its stream: revision ${expected} is missing before it`);
    const link = streamLink(head?.link ?? STREAM_START, hash);
    if (link.toString('hex') !== seal.link)
      return at(event.position, event.streamId, event.revision, "breaks its stream's chain: its seal was changed");
    heads.set(event.streamId, { revision: event.revision, link });
    leaves.push(link);
    checked();
  }
  const extra = events[i];
  if (extra && extra.position <= checkpoint.toPosition)
    return at(extra.position, extra.streamId, extra.revision, 'was added: it stands among sealed events and was never sealed');
  if (merkleRoot(leaves).toString('hex') !== checkpoint.root) return at(null, null, null, 'its root does not match its events’ seals');
  return null;
}
