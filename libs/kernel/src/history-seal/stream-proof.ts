import type { KeyObject } from 'node:crypto';
import type { EventStore } from '../ports/event-store.port';
import { SealStore, SignedCheckpoint } from '../ports/seal-store.port';
import { checkpointSigned, eventHash, merkleProof, STREAM_START, streamLink, verifyMerkleProof } from './seal';

/** One event of a stream as stored, with its seal and the audit path from its link to its checkpoint's root. */
export interface ProvenEvent {
  position: string;
  revision: number;
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  /** Its hash and stream link (hex); null while not sealed yet. */
  hash: string | null;
  link: string | null;
  checkpoint: number | null;
  index: number | null;
  /** The audit path from its leaf up to its checkpoint's root: each sibling's hash (hex) and side. */
  proof: Array<{ side: 'left' | 'right'; hash: string }>;
}

/** What an auditor checks one stream's history with, by themselves: its events, their seals and paths, and the signed checkpoints. */
export interface StreamProof {
  stream: string;
  events: ProvenEvent[];
  /** Positions sealed in this stream whose events are no longer in the log (a proof that reads the stream alone would not show them). */
  removed: string[];
  checkpoints: SignedCheckpoint[];
}

/**
 * A stream's proof: every event with its seal and Merkle audit path, and the checkpoints holding
 * them. Reads the stream, its seals, and each checkpoint's seals once (its tree's leaves), not the log.
 */
export async function proveStream(log: EventStore, seals: SealStore, streamId: string): Promise<StreamProof> {
  const events = await log.readStream(streamId);
  const sealed = new Map((await seals.sealsOfStream(streamId)).map((seal) => [seal.position, seal]));
  const numbers = [...new Set([...sealed.values()].map((seal) => seal.checkpoint))].sort((a, b) => a - b);
  const leaves = new Map<number, { links: Buffer[]; memo: Map<number, Buffer> }>();
  const checkpoints: SignedCheckpoint[] = [];
  for (const number of numbers) {
    leaves.set(number, { links: (await seals.sealsOf(number)).map((seal) => Buffer.from(seal.link, 'hex')), memo: new Map() });
    const [checkpoint] = await seals.checkpoints(number, 1);
    if (checkpoint) checkpoints.push(checkpoint);
  }
  const present = new Set(events.map((event) => event.position));
  return {
    stream: streamId,
    checkpoints,
    removed: [...sealed.keys()].filter((position) => !present.has(position)),
    events: events.map((event) => {
      const seal = sealed.get(event.position);
      const { position, revision, id, type, data, metadata } = event;
      return {
        position,
        revision,
        id,
        type,
        data,
        metadata,
        hash: seal?.hash ?? null,
        link: seal?.link ?? null,
        checkpoint: seal?.checkpoint ?? null,
        index: seal?.index ?? null,
        proof: seal
          ? merkleProof(leaves.get(seal.checkpoint)!.links, seal.index, leaves.get(seal.checkpoint)!.memo).map((step) => ({
              side: step.side,
              hash: step.hash.toString('hex'),
            }))
          : [],
      };
    }),
  };
}

/** The seal's proofs and the key checkpoints are signed with, for the service's answers (the installation's sealing provides it). */
export abstract class HistoryProofs {
  /** The checkpoint-signing public key, PEM (SPKI). */
  abstract publicKeyPem(): string;
  abstract streamProof(streamId: string): Promise<StreamProof>;
  /** Signed checkpoints from number `from` on, up to `limit`. */
  abstract checkpoints(from: number, limit: number): Promise<SignedCheckpoint[]>;
}

/** What checking one stream's proof found: each event's result, and the first failure named. */
export interface StreamVerification {
  verified: boolean;
  /** Sealed events that match, and those not sealed yet (the next checkpoint seals them). */
  events: Array<{ position: string; revision: number; type: string; result: 'verified' | 'not sealed yet' | string }>;
  /** The first thing that does not match, in words; null when everything sealed matches. */
  failure: string | null;
}

/**
 * Checks a stream's proof as an auditor's own script does, and more: the stream's chain is made again
 * from its first event (revision 0, 1, ... with none missing), each event's hash over its content
 * and its link after the one before; a sealed event's hash and link must be its seal's, the link's
 * audit path must lead to its checkpoint's root, and the checkpoint must be signed with
 * `publicKey`. An event not sealed yet must come after every sealed one and after the last
 * checkpoint that sealed any of them; sealed events gone from the log fail it too.
 */
export function verifyStreamProof(proof: StreamProof, publicKey: KeyObject): StreamVerification {
  const checkpoints = new Map(proof.checkpoints.map((c) => [c.number, c]));
  const signed = new Map(proof.checkpoints.map((c) => [c.number, checkpointSigned(c, c.signature, publicKey)]));
  const lastSealedAt = proof.checkpoints.reduce<string | null>(
    (last, c) => (last === null || c.toPosition > last ? c.toPosition : last),
    null,
  );
  let link: Buffer = STREAM_START;
  let unsealedSeen = false;
  let failure: string | null = null;
  const events = proof.events.map((event, index) => {
    const { position, revision, type } = event;
    const fail = (why: string) => {
      const result = `does not match: ${why}`;
      failure ??= `the event at position ${position} (${type}, revision ${revision}) ${result}`;
      return { position, revision, type, result };
    };
    const hash = eventHash({ streamId: proof.stream, ...event });
    link = streamLink(link, hash);
    // eslint-disable-next-line no-restricted-syntax -- revisions and checkpoint ids of ours
    if (revision !== index) return fail(`the stream's revision ${index} is missing before it`);
    if (event.hash === null || event.link === null || event.checkpoint === null || event.index === null) {
      unsealedSeen = true;
      if (lastSealedAt !== null && position <= lastSealedAt) return fail('it is not sealed, though events after it in the log are');
      return { position, revision, type, result: 'not sealed yet' };
    }
    if (unsealedSeen) return fail('it is sealed, though an event before it in its stream is not');
    if (hash.toString('hex') !== event.hash) return fail('its content was changed since it was sealed');
    if (!link.equals(Buffer.from(event.link, 'hex'))) return fail('its link does not follow the events before it in its stream');
    const checkpoint = checkpoints.get(event.checkpoint);
    // eslint-disable-next-line no-restricted-syntax -- revisions and checkpoint ids of ours
    if (!checkpoint) return fail(`its checkpoint ${event.checkpoint} is missing`);
    // eslint-disable-next-line no-restricted-syntax -- revisions and checkpoint ids of ours
    if (!signed.get(event.checkpoint)) return fail(`checkpoint ${event.checkpoint} is not signed by the service's key`);
    const steps = event.proof.map((step) => ({ side: step.side, hash: Buffer.from(step.hash, 'hex') }));
    if (!verifyMerkleProof(link, event.index, checkpoint.count, steps, Buffer.from(checkpoint.root, 'hex')))
      // eslint-disable-next-line no-restricted-syntax -- revisions and checkpoint ids of ours
      return fail(`its audit path does not lead to checkpoint ${event.checkpoint}'s root`);
    return { position, revision, type, result: 'verified' as const };
  });
  if (!failure && proof.removed.length)
    failure = `sealed events of the stream are gone from the log (positions ${proof.removed.join(', ')})`;
  return { verified: failure === null, events, failure };
}
