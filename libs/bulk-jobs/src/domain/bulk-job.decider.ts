import { Decider, DomainCommand, DomainError, ignoredEvent, NotFound, RetryLater, unknownCommand } from '@deals/kernel';
import {
  BulkItemCounts,
  BulkItemResult,
  BulkJobEvent,
  BulkJobItemsAdded,
  BulkJobKind,
  BulkJobQueueEvent,
  chunkOf,
  noCounts,
} from './bulk-job.events';

/** The most items a job takes. */
export const MAX_BULK_ITEMS = 10_000;
/** The most jobs a partner has open (queued or running) at once. */
export const MAX_OPEN_BULK_JOBS = 3;
/** Items a chunk holds: the unit the job's items are run and recorded by. */
export const BULK_CHUNK_SIZE = 200;
/** The largest body a single call takes (the server's limit): an item's fields are held to it. */
export const SINGLE_CALL_BODY_LIMIT = 1024 * 1024;
/**
 * The most bytes of items one event of the job keeps (a chunk's items in as many events as it
 * takes); an item larger than that, up to its call's 1 MiB, is an event of its own.
 */
export const ITEMS_EVENT_BYTES = 256 * 1024;
/**
 * Runs of a chunk in all: the chunk's failed runs are counted, and on its last run an item that
 * fails with the service's fault is recorded as failed with the 500 or 503 its single call would
 * answer, so that one item the service cannot run does not hold the partner's jobs for ever. (A
 * failed run is retried twice within seconds, then by the sweep a minute later: nine runs span about
 * three minutes; a run that failed because the event log is away records no failure: the record is
 * a write to it.)
 */
export const MAX_CHUNK_RUNS = 9;
/** What a partner with its open jobs at the limit is told to wait before sending another. */
const OPEN_JOBS_RETRY_S = 60;

/** A partner's open jobs are at {@link MAX_OPEN_BULK_JOBS}: another is accepted once one completes. */
export class TooManyBulkJobs extends RetryLater {
  readonly errorType = 'too_many_bulk_jobs';
  readonly httpStatus = 429;
  constructor(partnerId: string) {
    super(
      `partner ${partnerId} has ${MAX_OPEN_BULK_JOBS} bulk jobs open, the most it may: send another once one completes`,
      OPEN_JOBS_RETRY_S,
    );
  }
}

/** A job that has completed has nothing left to cancel. */
export class BulkJobCompletedAlready extends DomainError {
  readonly errorType = 'bulk_job_completed';
  readonly httpStatus = 409;
  constructor(jobId: string) {
    super(`bulk job ${jobId} has completed: nothing is left to cancel`);
  }
}

/** `sizes`: each item's {@link itemBytes}, in the items' order (worked out beforehand, a slice at a time). */
export type AcceptBulkJob = DomainCommand<
  'AcceptBulkJob',
  { jobId: string; partnerId: string; kind: BulkJobKind; items: Array<Record<string, unknown>>; sizes: readonly number[]; keyId?: string }
>;
export type StartBulkJob = DomainCommand<'StartBulkJob', { jobId: string }>;
export type RecordBulkChunk = DomainCommand<'RecordBulkChunk', { jobId: string; chunk: number; results: BulkItemResult[] }>;
export type RecordChunkFailure = DomainCommand<'RecordChunkFailure', { jobId: string; chunk: number }>;
export type CompleteBulkJob = DomainCommand<'CompleteBulkJob', { jobId: string }>;
/**
 * The partner's cancellation, or (`credential_revoked`) the service's when the key that sent the job
 * is revoked: a job not started yet completes at once; a running one once its chunk under way is recorded.
 */
export type CancelBulkJob = DomainCommand<'CancelBulkJob', { jobId: string; partnerId: string; reason?: 'credential_revoked' }>;
/** Records that the key of the job's items is deleted (done before: this records it). */
export type RecordItemsErased = DomainCommand<'RecordItemsErased', { jobId: string }>;
export type BulkJobCommand =
  AcceptBulkJob | StartBulkJob | RecordBulkChunk | RecordChunkFailure | CompleteBulkJob | CancelBulkJob | RecordItemsErased;

/** A job's stream: none yet, or a job accepted, running, or completed. */
export type BulkJob = { status: 'none' } | AcceptedJob | RunningJob | CompletedJob;
export type KnownBulkJob = AcceptedJob | RunningJob | CompletedJob;

interface JobRecord {
  partnerId: string;
  /** The API key that sent it; null when not kept. */
  keyId: string | null;
  kind: BulkJobKind;
  itemCount: number;
  chunkSize: number;
  /** Cancelled by the partner: no chunk starts; completed (as cancelled) once none is under way. */
  cancelled: boolean;
  /** Chunks whose results are recorded. */
  recorded: ReadonlySet<number>;
  /** Failed runs of each chunk whose results are not recorded. */
  failedRuns: ReadonlyMap<number, number>;
  counts: BulkItemCounts;
}

export interface AcceptedJob extends JobRecord {
  status: 'accepted';
}

export interface RunningJob extends JobRecord {
  status: 'running';
  /** Cancelled while running: the chunk next at the cancel, whose results are recorded before the job completes (null: none). */
  finishChunk: number | null;
}

export interface CompletedJob extends JobRecord {
  status: 'completed';
  itemsErased: boolean;
}

/** How many chunks a job of `itemCount` items has. */
export const chunkCount = (job: Pick<JobRecord, 'itemCount' | 'chunkSize'>) => Math.ceil(job.itemCount / job.chunkSize);

/** The job the stream holds; not found when it holds none. */
export function knownJob(job: BulkJob): KnownBulkJob {
  if (job.status === 'none') throw new NotFound('bulk job not found');
  return job;
}

/** What a job holds whatever its status (a status's own fields left behind). */
function recordOf(job: KnownBulkJob): JobRecord {
  const { partnerId, keyId, kind, itemCount, chunkSize, cancelled, recorded, failedRuns, counts } = job;
  return { partnerId, keyId, kind, itemCount, chunkSize, cancelled, recorded, failedRuns, counts };
}

/**
 * The chunk the job runs next: its next unrecorded one; cancelled, only the chunk that was next at
 * the cancel (its items may be done in part: they keep their results), if not recorded yet. Null:
 * the job's next step is its completion.
 */
export function chunkToRun(job: BulkJob): number | null {
  if (job.status !== 'running') return null;
  if (!job.cancelled) return nextChunk(job);
  return job.finishChunk !== null && !job.recorded.has(job.finishChunk) ? job.finishChunk : null;
}

/** The first chunk whose results are not recorded; null when all are. */
export function nextChunk(job: Pick<JobRecord, 'itemCount' | 'chunkSize' | 'recorded'>): number | null {
  for (let chunk = 0; chunk < chunkCount(job); chunk++) if (!job.recorded.has(chunk)) return chunk;
  return null;
}

/** The bytes of an item's fields as JSON, without its `reference` (the job's, not the call's): what its single call's body would be. */
export function itemBytes(item: Record<string, unknown>): number {
  const { reference: _reference, ...fields } = item;
  return Buffer.byteLength(JSON.stringify(fields));
}

/** The events that keep items `from` to `to` (one chunk's) of a job: parts of at most {@link ITEMS_EVENT_BYTES} each, an oversize item as its reference. */
function itemsAdded(
  jobId: string,
  items: Array<Record<string, unknown>>,
  sizes: readonly number[],
  from: number,
  to: number,
): BulkJobItemsAdded[] {
  const chunk = chunkOf(from, BULK_CHUNK_SIZE);
  const parts: BulkJobItemsAdded[] = [];
  let part: BulkJobItemsAdded | null = null;
  let bytes = 0;
  for (let index = from; index < to; index++) {
    const size = sizes[index];
    const oversize = size > SINGLE_CALL_BODY_LIMIT;
    const kept = oversize ? { reference: items[index].reference } : items[index];
    const keptBytes = oversize ? 0 : size;
    if (part === null || (bytes + keptBytes > ITEMS_EVENT_BYTES && part.data.items.length > 0)) {
      parts.push((part = { type: 'BulkJobItemsAdded', data: { jobId, chunk, items: [] } }));
      bytes = 0;
    }
    part.data.items.push(kept);
    bytes += keptBytes;
    if (oversize) (part.data.oversize ??= []).push(index);
  }
  return parts;
}

function completed(job: KnownBulkJob, jobId: string, at: string): BulkJobEvent {
  const data = { jobId, partnerId: job.partnerId, kind: job.kind, counts: job.counts, completedAt: at };
  return { type: 'BulkJobCompleted', data: job.cancelled ? { ...data, cancelled: true } : data };
}

/** Whether the chunk's next run is its last: its items are then recorded whatever they meet. */
export const isLastRun = (job: Pick<JobRecord, 'failedRuns'>, chunk: number) => (job.failedRuns.get(chunk) ?? 0) >= MAX_CHUNK_RUNS - 1;

/**
 * A bulk job: its items accepted (kept in chunks), each chunk's results recorded once, then
 * completed once every chunk's are. Results recorded again for a chunk (a chunk run twice) are
 * refused: the first record stands.
 */
export const bulkJobDecider: Decider<BulkJob, BulkJobCommand, BulkJobEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state, now) {
    const at = now.toISOString();
    switch (command.type) {
      case 'AcceptBulkJob': {
        const { jobId, partnerId, kind, items, sizes, keyId } = command.data;
        if (state.status !== 'none') return [];
        if (sizes.length !== items.length) throw new RangeError(`bulk job ${jobId}: ${sizes.length} sizes for ${items.length} items`);
        const accepted = { jobId, partnerId, kind, itemCount: items.length, chunkSize: BULK_CHUNK_SIZE, acceptedAt: at };
        const events: BulkJobEvent[] = [{ type: 'BulkJobAccepted', data: keyId === undefined ? accepted : { ...accepted, keyId } }];
        for (let first = 0; first < items.length; first += BULK_CHUNK_SIZE)
          events.push(...itemsAdded(jobId, items, sizes, first, Math.min(first + BULK_CHUNK_SIZE, items.length)));
        return events;
      }
      case 'StartBulkJob': {
        const job = knownJob(state);
        if (job.status !== 'accepted' || job.cancelled) return [];
        return [{ type: 'BulkJobStarted', data: { jobId: command.data.jobId, partnerId: job.partnerId, startedAt: at } }];
      }
      case 'RecordBulkChunk': {
        const { jobId, chunk, results } = command.data;
        const job = knownJob(state);
        if (job.status === 'accepted') throw new Error(`bulk job ${jobId}: a chunk's results recorded before the job started`);
        if (job.status === 'completed' || job.recorded.has(chunk)) return [];
        if (!Number.isInteger(chunk) || chunk < 0 || chunk >= chunkCount(job))
          throw new RangeError(`bulk job ${jobId} has no chunk ${chunk}`);
        const { partnerId, kind } = job;
        return [{ type: 'BulkJobChunkProcessed', data: { jobId, partnerId, kind, chunk, results, processedAt: at } }];
      }
      case 'RecordChunkFailure': {
        const { jobId, chunk } = command.data;
        const job = knownJob(state);
        if (job.status !== 'running' || job.recorded.has(chunk)) return [];
        return [{ type: 'BulkJobChunkFailed', data: { jobId, partnerId: job.partnerId, chunk, failedAt: at } }];
      }
      case 'CompleteBulkJob': {
        const { jobId } = command.data;
        const job = knownJob(state);
        if (job.status === 'completed') return [];
        const pending = job.cancelled ? chunkToRun(job) : nextChunk(job);
        if (pending !== null) throw new Error(`bulk job ${jobId} is completed before its chunk ${pending} was run`);
        return [completed(job, jobId, at)];
      }
      case 'CancelBulkJob':
        return cancel(command, state, at);
      case 'RecordItemsErased': {
        const { jobId } = command.data;
        if (state.status !== 'completed') throw new Error(`bulk job ${jobId}: its items erased before it completed`);
        return state.itemsErased ? [] : [{ type: 'BulkJobItemsErased', data: { jobId, partnerId: state.partnerId, erasedAt: at } }];
      }
      default:
        return unknownCommand(command);
    }
  },
  evolve(job, event) {
    if (event.type === 'BulkJobAccepted') {
      const { partnerId, kind, itemCount, chunkSize } = event.data;
      const keyId = event.data.keyId ?? null;
      const record = {
        partnerId,
        keyId,
        kind,
        itemCount,
        chunkSize,
        cancelled: false,
        recorded: new Set<number>(),
        failedRuns: new Map(),
        counts: noCounts(),
      };
      return { ...record, status: 'accepted' };
    }
    // Every other event follows the acceptance (one before it is none the decider wrote, and is ignored).
    if (job.status === 'none') return job;
    switch (event.type) {
      case 'BulkJobItemsAdded':
        return job;
      case 'BulkJobStarted':
        return { ...recordOf(job), status: 'running', finishChunk: null };
      case 'BulkJobChunkProcessed': {
        const counts = { ...job.counts };
        for (const result of event.data.results) counts[result.status]++;
        const failedRuns = new Map(job.failedRuns);
        failedRuns.delete(event.data.chunk);
        return { ...job, recorded: new Set([...job.recorded, event.data.chunk]), failedRuns, counts };
      }
      case 'BulkJobChunkFailed': {
        const { chunk } = event.data;
        return { ...job, failedRuns: new Map(job.failedRuns).set(chunk, (job.failedRuns.get(chunk) ?? 0) + 1) };
      }
      case 'BulkJobCancelled':
        return job.status === 'running'
          ? { ...job, cancelled: true, finishChunk: event.data.finishChunk ?? null }
          : { ...job, cancelled: true };
      case 'BulkJobCompleted':
        return { ...recordOf(job), status: 'completed', itemsErased: false };
      case 'BulkJobItemsErased':
        return job.status === 'completed' ? { ...job, itemsErased: true } : job;
      default:
        return ignoredEvent(event, job);
    }
  },
};

/** The partner's cancel (or the service's, its key revoked): a job not started completes at once, a running one once its chunk under way is recorded. */
function cancel({ data }: CancelBulkJob, state: BulkJob, at: string): BulkJobEvent[] {
  const { jobId, partnerId, reason } = data;
  if (state.status === 'none' || state.partnerId !== partnerId) throw new NotFound('bulk job not found');
  if (state.cancelled) return [];
  if (state.status === 'completed') throw new BulkJobCompletedAlready(jobId);
  const finishChunk = state.status === 'running' ? nextChunk(state) : null;
  const cancelled: BulkJobEvent = {
    type: 'BulkJobCancelled',
    data: {
      jobId,
      partnerId,
      cancelledAt: at,
      ...(finishChunk === null ? {} : { finishChunk }),
      ...(reason === undefined ? {} : { reason }),
    },
  };
  // Not started: no chunk can be under way, so it completes now.
  return state.status === 'accepted' ? [cancelled, completed({ ...state, cancelled: true }, jobId, at)] : [cancelled];
}

export type QueueBulkJob = DomainCommand<'QueueBulkJob', { partnerId: string; jobId: string }>;
export type DequeueBulkJob = DomainCommand<'DequeueBulkJob', { partnerId: string; jobId: string }>;
export type BulkJobQueueCommand = QueueBulkJob | DequeueBulkJob;

/** A partner's open jobs, oldest first. */
export interface BulkJobQueue {
  open: readonly string[];
}

/** The partner's open jobs: at most {@link MAX_OPEN_BULK_JOBS}, run one at a time in the order accepted. */
export const bulkJobQueueDecider: Decider<BulkJobQueue, BulkJobQueueCommand, BulkJobQueueEvent> = {
  initialState: () => ({ open: [] }),
  decide(command, queue) {
    const { partnerId, jobId } = command.data;
    switch (command.type) {
      case 'QueueBulkJob':
        if (queue.open.includes(jobId)) return [];
        if (queue.open.length >= MAX_OPEN_BULK_JOBS) throw new TooManyBulkJobs(partnerId);
        return [{ type: 'BulkJobQueued', data: { partnerId, jobId } }];
      case 'DequeueBulkJob':
        return queue.open.includes(jobId) ? [{ type: 'BulkJobLeftQueue', data: { partnerId, jobId } }] : [];
      default:
        return unknownCommand(command);
    }
  },
  evolve(queue, event) {
    switch (event.type) {
      case 'BulkJobQueued':
        return { open: [...queue.open, event.data.jobId] };
      case 'BulkJobLeftQueue':
        return { open: queue.open.filter((id) => id !== event.data.jobId) };
      default:
        return ignoredEvent(event, queue);
    }
  },
};
