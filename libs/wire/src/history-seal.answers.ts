import type { SignedCheckpoint, StreamProof } from '@deals/kernel';
import { z } from 'zod';

const hex = (description: string) => z.string().meta({ description });

export const signedCheckpointSchema = z
  .object({
    number: z.number().int(),
    previous: z.string().nullable().meta({ description: 'SHA-256 (hex) of the checkpoint before’s text; null for the first' }),
    from_position: z.string(),
    to_position: z.string(),
    count: z.number().int(),
    root: hex('the RFC 6962 Merkle root (hex) of its events’ stream links, in log order'),
    sealed_at: z.string(),
    signature: z.string().meta({
      description:
        'Ed25519 signature (base64) of the text `deals-checkpoint-v1 <number> <previous or -> <from_position> <to_position> <count> <root> <sealed_at>`',
    }),
  })
  .meta({ id: 'SignedCheckpoint', description: 'a run of the log’s events under one signed Merkle root' });

const provenEventSchema = z
  .object({
    position: z.string(),
    revision: z.number().int(),
    id: z.string(),
    type: z.string(),
    data: z.unknown(),
    metadata: z.unknown(),
    hash: hex('SHA-256 of the event (see the README’s check); null until sealed').nullable(),
    link: hex('SHA-256 of the stream link before it (32 zero bytes for the first) and its hash; null until sealed').nullable(),
    checkpoint: z.number().int().nullable(),
    index: z.number().int().nullable().meta({ description: 'its leaf among its checkpoint’s events' }),
    proof: z
      .array(z.object({ side: z.enum(['left', 'right']), hash: z.string() }))
      .meta({ description: 'its audit path: the siblings (hex) from its leaf up to the root, each with the side it stands on' }),
  })
  .meta({ id: 'ProvenEvent', description: 'one event of a stream as stored, with its seal and audit path' });

export const streamSealSchema = z
  .object({
    algorithm: z.literal('Ed25519'),
    public_key: z.string().meta({ description: 'the checkpoint-signing key, PEM (also at GET /audit/checkpoint-key)' }),
    stream: z.string(),
    events: z.array(provenEventSchema),
    removed: z
      .array(z.string())
      .meta({ description: 'positions sealed in this stream whose events are gone from the log: none in a sound history' }),
    checkpoints: z.array(signedCheckpointSchema),
  })
  .meta({
    id: 'StreamSeal',
    description: 'what an auditor checks a stream’s history with by themselves: its events, seals, audit paths and signed checkpoints',
  });

export const toSignedCheckpoint = (c: SignedCheckpoint) => ({
  number: c.number,
  previous: c.previous,
  from_position: c.fromPosition,
  to_position: c.toPosition,
  count: c.count,
  root: c.root,
  sealed_at: c.sealedAt,
  signature: c.signature,
});

export const toStreamSeal = (proof: StreamProof, publicKeyPem: string) => ({
  algorithm: 'Ed25519' as const,
  public_key: publicKeyPem,
  stream: proof.stream,
  events: proof.events,
  removed: proof.removed,
  checkpoints: proof.checkpoints.map(toSignedCheckpoint),
});
