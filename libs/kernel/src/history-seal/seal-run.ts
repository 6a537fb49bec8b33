/**
 * One checkpoint's making, from its events' hashes: shared by the sealer of any store and the
 * embedded store's sealing thread (which loads it by path: relative imports only).
 */
import type { KeyObject } from 'node:crypto';
import type { EventSeal, SignedCheckpoint } from '../ports/seal-store.port';
import { Checkpoint, checkpointHash, merkleRoot, signCheckpoint, STREAM_START, streamLink } from './seal';

/** The most events one checkpoint seals: a proof of one is its tree's path, and reading it reads them all. */
export const MAX_CHECKPOINT_EVENTS = 4096;

/** An event of the log to seal, with its own hash already taken. */
export interface HashedEvent {
  position: string;
  streamId: string;
  revision: number;
  hash: Buffer;
}

/**
 * The checkpoint after `last` over `events` (log order, at least one): each event's link in its
 * stream's chain (from `heads`, the newest link of each stream sealed before), the links' Merkle
 * root, the checkpoint naming the one before, signed; and the events' seals.
 */
export function sealRun(
  last: SignedCheckpoint | null,
  events: readonly HashedEvent[],
  heads: ReadonlyMap<string, Buffer>,
  sealedAt: string,
  signingKey: KeyObject,
): { checkpoint: SignedCheckpoint; seals: EventSeal[] } {
  const links = new Map(heads);
  const number = (last?.number ?? 0) + 1;
  const leaves: Buffer[] = [];
  const seals: EventSeal[] = [];
  for (const [index, { position, streamId, revision, hash }] of events.entries()) {
    const link = streamLink(links.get(streamId) ?? STREAM_START, hash);
    links.set(streamId, link);
    leaves.push(link);
    seals.push({ position, streamId, revision, hash: hash.toString('hex'), link: link.toString('hex'), checkpoint: number, index });
  }
  const checkpoint: Checkpoint = {
    number,
    previous: last ? checkpointHash(last) : null,
    fromPosition: events[0].position,
    toPosition: events[events.length - 1].position,
    count: events.length,
    root: merkleRoot(leaves).toString('hex'),
    sealedAt,
  };
  return { checkpoint: { ...checkpoint, signature: signCheckpoint(checkpoint, signingKey) }, seals };
}
