import type { DomainEvent } from '@deals/kernel';

/** What a bulk job does to each of its items: the single call each item stands for. */
export const BULK_JOB_KINDS = ['users', 'saved_deals', 'subscriptions', 'coupon_redemptions'] as const;
export type BulkJobKind = (typeof BULK_JOB_KINDS)[number];

/**
 * What became of one item: `succeeded` (the call did what it does: the user made, the deal saved,
 * the subscription made, the coupon redeemed), `matched` (a user with the item's email existed:
 * nothing made), `already_done` (an earlier job of the partner did the item of this reference),
 * `failed` (refused, with the status and error body the single call answers).
 */
export const BULK_ITEM_STATUSES = ['succeeded', 'matched', 'already_done', 'failed'] as const;
export type BulkItemStatus = (typeof BULK_ITEM_STATUSES)[number];

/** An error body as the single call answers it. */
export interface BulkItemError {
  status: number;
  body: Record<string, unknown>;
}

export interface BulkItemResult {
  /** The item's place in the job, from 0. */
  index: number;
  reference: string;
  status: BulkItemStatus;
  /** The record the item made, matched or acted on (a user, saved deal, subscription or coupon); null when it failed. */
  resourceId: string | null;
  /** The job that did it, for `already_done`. */
  doneBy: string | null;
  error: BulkItemError | null;
}

/** The counts of a job's results by status. */
export type BulkItemCounts = Record<BulkItemStatus, number>;

export const noCounts = (): BulkItemCounts => ({ succeeded: 0, matched: 0, already_done: 0, failed: 0 });

export type BulkJobAccepted = DomainEvent<
  'BulkJobAccepted',
  {
    jobId: string;
    partnerId: string;
    kind: BulkJobKind;
    itemCount: number;
    chunkSize: number;
    acceptedAt: string;
    /** The partner's API key that sent the job (absent on jobs accepted before it was kept): the job is cancelled if it is revoked. */
    keyId?: string;
  }
>;
/**
 * A chunk's items, or a part of them (a chunk's parts follow each other in order), as sent, each with
 * its `reference`; the items are the partner's data, sealed in the log. An item larger than its
 * single call takes is kept as its reference alone, its place in the job in `oversize`.
 */
export type BulkJobItemsAdded = DomainEvent<
  'BulkJobItemsAdded',
  { jobId: string; chunk: number; items: Array<Record<string, unknown>>; oversize?: number[] }
>;
/** The job's turn came: its items run from now on. */
export type BulkJobStarted = DomainEvent<'BulkJobStarted', { jobId: string; partnerId: string; startedAt: string }>;
export type BulkJobChunkProcessed = DomainEvent<
  'BulkJobChunkProcessed',
  { jobId: string; partnerId: string; kind: BulkJobKind; chunk: number; results: BulkItemResult[]; processedAt: string }
>;
/** A run of the chunk failed (a store away, a fault of the service): counted, so that its last run records its items whatever they meet. */
export type BulkJobChunkFailed = DomainEvent<'BulkJobChunkFailed', { jobId: string; partnerId: string; chunk: number; failedAt: string }>;
/**
 * Why a job was cancelled: `requested`, by the partner's call (the events say no reason then);
 * `credential_revoked`, the API key that sent it was revoked.
 */
export const BULK_JOB_CANCELLATION_REASONS = ['requested', 'credential_revoked'] as const;
export type BulkJobCancellationReason = (typeof BULK_JOB_CANCELLATION_REASONS)[number];

/** The job was cancelled: no chunk starts from now on (one under way is recorded), and the job completes as cancelled. */
export type BulkJobCancelled = DomainEvent<
  'BulkJobCancelled',
  /** `finishChunk`: a running job's chunk next at the cancel (maybe under way, or failed part-done): run to its results before the job completes. */
  { jobId: string; partnerId: string; cancelledAt: string; finishChunk?: number; reason?: 'credential_revoked' }
>;
/** Every chunk's results are in, or (`cancelled`) those of the chunks run before the job was cancelled. */
export type BulkJobCompleted = DomainEvent<
  'BulkJobCompleted',
  { jobId: string; partnerId: string; kind: BulkJobKind; counts: BulkItemCounts; completedAt: string; cancelled?: boolean }
>;
/** The key the job's items were sealed under is deleted: they are unreadable from now on. */
export type BulkJobItemsErased = DomainEvent<'BulkJobItemsErased', { jobId: string; partnerId: string; erasedAt: string }>;
export type BulkJobEvent =
  | BulkJobAccepted
  | BulkJobItemsAdded
  | BulkJobStarted
  | BulkJobChunkProcessed
  | BulkJobChunkFailed
  | BulkJobCancelled
  | BulkJobCompleted
  | BulkJobItemsErased;

/** A partner's open jobs, oldest first: the first runs, the others wait for it. */
export type BulkJobQueued = DomainEvent<'BulkJobQueued', { partnerId: string; jobId: string }>;
export type BulkJobLeftQueue = DomainEvent<'BulkJobLeftQueue', { partnerId: string; jobId: string }>;
export type BulkJobQueueEvent = BulkJobQueued | BulkJobLeftQueue;

export const bulkJobStream = (jobId: string) => `bulkjob-${jobId}`;
export const bulkJobQueueStream = (partnerId: string) => `bulkjobqueue-${partnerId}`;

/** Whose key seals a job's items in the log: deleted once the job is done, so the items are kept no longer than it runs. */
export const bulkJobItemsOwner = (jobId: string) => `bulk-job:${jobId}`;

/** The job's item events' ids (its stream's revisions 1..n) and its chunk numbers: item i is in chunk floor(i / chunkSize). */
export const chunkOf = (index: number, chunkSize: number) => Math.floor(index / chunkSize);
