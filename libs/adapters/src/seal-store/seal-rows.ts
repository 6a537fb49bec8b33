import type { EventSeal, SignedCheckpoint } from '@deals/kernel';

/** A checkpoint's row, as both stores keep it. */
export interface CheckpointRow {
  number: number | string;
  previous: string | null;
  from_position: string;
  to_position: string;
  count: number | string;
  root: string;
  sealed_at: string;
  signature: string;
}

/** An event seal's row, as both stores keep it. */
export interface SealRow {
  position: string;
  stream_id: string;
  revision: number | string;
  hash: string;
  link: string;
  checkpoint: number | string;
  idx: number | string;
}

export const toCheckpoint = (row: CheckpointRow): SignedCheckpoint => ({
  number: Number(row.number),
  previous: row.previous,
  fromPosition: row.from_position,
  toPosition: row.to_position,
  count: Number(row.count),
  root: row.root,
  sealedAt: row.sealed_at,
  signature: row.signature,
});

export const toSeal = (row: SealRow): EventSeal => ({
  position: row.position,
  streamId: row.stream_id,
  revision: Number(row.revision),
  hash: row.hash,
  link: row.link,
  checkpoint: Number(row.checkpoint),
  index: Number(row.idx),
});
