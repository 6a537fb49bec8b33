import {
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  handleCommands,
  loadAggregate,
  PersonalDataEventStore,
  RecentMap,
  Scheduler,
  ViewProgress,
  ViewStore,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { BulkJob, bulkJobDecider, bulkJobQueueDecider, chunkCount, nextChunk } from '../domain/bulk-job.decider';
import { BulkItemResult, BulkJobItemsAdded, bulkJobItemsOwner, bulkJobQueueStream, bulkJobStream } from '../domain/bulk-job.events';
import { BulkItems } from '../items/bulk-items';
import { BULK_JOB_ITEMS, BulkJobItemView, doneKey } from '../projections/bulk-job-items/bulk-job-items.projection';
import { BULK_JOBS, BulkJobView } from '../projections/bulk-jobs/bulk-jobs.projection';

export const RUN_BULK_CHUNK_JOB = 'run-bulk-chunk';
/** Items of a chunk run at once: their writes share the store's commits, and the rest of the service keeps its share of the process. */
const ITEMS_AT_ONCE = 8;
/** Jobs whose items a process keeps read (a job's chunks run one after the other, mostly in one process). */
const JOBS_KEPT = 4;
const SYSTEM: CommandCaller = { actor: 'system' };

/**
 * Runs the partners' bulk jobs in the background, a chunk of items at a time, each chunk a job of
 * the scheduler (timers embedded, BullMQ distributed): a partner's jobs one after the other, in the
 * order accepted; each chunk's results recorded once on the job's stream, then the next chunk
 * armed; after the last, the job completed, its items' key deleted (the items, sealed in the log
 * under it, are unreadable from then on) and the partner's next job armed. A process that stops
 * mid-chunk loses no item: the chunk's results were not recorded, so it runs again, and its items
 * find what their first run did (see `BulkItems`). Armed again when a job-running process starts.
 */
@Injectable()
export class BulkJobRunner {
  private readonly items = new RecentMap<string, Array<Array<Record<string, unknown>>>>(JOBS_KEPT);

  constructor(
    private readonly scheduler: Scheduler,
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly bulkItems: BulkItems,
    private readonly progress: ViewProgress,
    private readonly views: ViewStore,
    private readonly personalData: PersonalDataEventStore,
  ) {
    this.scheduler.handle(RUN_BULK_CHUNK_JOB, (job) => this.runChunk(String(job.data.jobId)));
  }

  /** Arms every open job's next step (called when a job-running process starts). */
  async rearm(): Promise<void> {
    for (const job of await this.views.find<BulkJobView>(BULK_JOBS, { status: { $in: ['queued', 'running'] } })) await this.arm(job._id);
  }

  /** Arms the job's next chunk, or its completion, when its turn has come (the first of its partner's open jobs). */
  async arm(jobId: string): Promise<void> {
    const { state: job } = await loadAggregate(this.store, bulkJobStream(jobId), bulkJobDecider);
    if (job.status === 'none') return;
    if (job.status === 'completed') return this.finish(jobId, job);
    const { state: queue } = await loadAggregate(this.store, bulkJobQueueStream(job.partnerId!), bulkJobQueueDecider);
    if (queue.open[0] !== jobId) return;
    const step = nextChunk(job) ?? 'end';
    await this.scheduler.schedule({ id: `bulk-${jobId}-${step}`, kind: RUN_BULK_CHUNK_JOB, runAt: this.clock.now(), data: { jobId } });
  }

  /** Runs the job's next chunk whose results are not recorded, or completes it. */
  async runChunk(jobId: string): Promise<void> {
    const now = () => ({ now: this.clock.now(), metadata: SYSTEM });
    let { state: job } = await loadAggregate(this.store, bulkJobStream(jobId), bulkJobDecider);
    if (job.status === 'none') return;
    if (job.status === 'completed') return this.finish(jobId, job);
    const { state: queue } = await loadAggregate(this.store, bulkJobQueueStream(job.partnerId!), bulkJobQueueDecider);
    if (queue.open[0] !== jobId) return;
    if (job.status === 'accepted') {
      // Its turn: the earlier jobs' items are in the view, for the references done there.
      await this.progress.waitFor([BULK_JOB_ITEMS], await this.store.head());
      job = (await handleCommand(this.store, bulkJobStream(jobId), bulkJobDecider, { type: 'StartBulkJob', data: { jobId } }, now())).state;
    }
    const chunk = nextChunk(job);
    if (chunk !== null) {
      const results = await this.results(jobId, job, chunk);
      await handleCommand(
        this.store,
        bulkJobStream(jobId),
        bulkJobDecider,
        { type: 'RecordBulkChunk', data: { jobId, chunk, results } },
        now(),
      );
      if (chunk + 1 < chunkCount(job)) return this.arm(jobId);
    }
    const [completed] = await handleCommands(
      this.store,
      [
        { streamId: bulkJobStream(jobId), decider: bulkJobDecider, command: { type: 'CompleteBulkJob', data: { jobId } } },
        {
          streamId: bulkJobQueueStream(job.partnerId!),
          decider: bulkJobQueueDecider,
          command: { type: 'DequeueBulkJob', data: { partnerId: job.partnerId!, jobId } },
        },
      ],
      now(),
    );
    await this.finish(jobId, completed.state as BulkJob);
  }

  /** A completed job: its items' key deleted, its partner's next job armed. */
  private async finish(jobId: string, job: BulkJob): Promise<void> {
    await this.personalData.erase(bulkJobItemsOwner(jobId), this.clock.now());
    const { state: queue } = await loadAggregate(this.store, bulkJobQueueStream(job.partnerId!), bulkJobQueueDecider);
    if (queue.open.includes(jobId)) {
      // Completed, and left in the queue by a process that stopped between the two writes.
      await handleCommand(
        this.store,
        bulkJobQueueStream(job.partnerId!),
        bulkJobQueueDecider,
        { type: 'DequeueBulkJob', data: { partnerId: job.partnerId!, jobId } },
        { now: this.clock.now(), metadata: SYSTEM },
      );
      return this.finish(jobId, job);
    }
    if (queue.open.length > 0) await this.arm(queue.open[0]);
  }

  /** Runs a chunk's items, {@link ITEMS_AT_ONCE} at a time; an item whose reference an earlier job did is not run again. */
  private async results(jobId: string, job: BulkJob, chunk: number): Promise<BulkItemResult[]> {
    const items = (await this.itemsOf(jobId))[chunk];
    const partnerId = job.partnerId!;
    const kind = job.kind!;
    const keys = items.map((item) => doneKey(partnerId, kind, String(item.reference)));
    const doneBefore = new Map<string, BulkJobItemView>();
    for (const done of await this.views.find<BulkJobItemView>(BULK_JOB_ITEMS, { done: { $in: keys } }))
      if (done.jobId !== jobId && !doneBefore.has(done.done!)) doneBefore.set(done.done!, done);
    const first = chunk * job.chunkSize;
    const results: BulkItemResult[] = new Array(items.length);
    let next = 0;
    const work = async () => {
      for (let i = next++; i < items.length; i = next++) {
        const index = first + i;
        const reference = String(items[i].reference);
        const earlier = doneBefore.get(keys[i]);
        if (earlier) {
          results[i] = { index, reference, status: 'already_done', resourceId: earlier.resourceId, doneBy: earlier.jobId, error: null };
          continue;
        }
        const outcome = await this.bulkItems.run(kind, {
          jobId,
          index,
          fields: items[i],
          caller: { actor: `partner:${partnerId}`, partnerId },
        });
        results[i] = { index, reference, doneBy: null, ...outcome };
      }
    };
    await Promise.all(Array.from({ length: Math.min(ITEMS_AT_ONCE, items.length) }, work));
    return results;
  }

  /** The job's items by chunk, read once a process (they are sealed in the log: opened with the job's key). */
  private async itemsOf(jobId: string): Promise<Array<Array<Record<string, unknown>>>> {
    const kept = this.items.get(jobId);
    if (kept) return kept;
    const chunks: Array<Array<Record<string, unknown>>> = [];
    for (const event of await this.store.readStream(bulkJobStream(jobId)))
      if (event.type === 'BulkJobItemsAdded') {
        const { chunk, items } = (event as unknown as BulkJobItemsAdded).data;
        if (!Array.isArray(items)) throw new Error(`bulk job ${jobId}: the items of chunk ${chunk} are unreadable (their key is deleted)`);
        chunks[chunk] = items;
      }
    this.items.set(jobId, chunks);
    return chunks;
  }
}
