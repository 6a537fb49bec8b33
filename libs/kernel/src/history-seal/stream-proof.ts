import type { EventStore } from '../ports/event-store.port';
import { SealStore, SignedCheckpoint } from '../ports/seal-store.port';
import { merkleProof } from './seal';

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
