import {
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  handleCommands,
  loadCachedAggregate,
  PersonalDataEventStore,
  RecentMap,
  Scheduler,
  ViewProgress,
  ViewStore,
} from '@deals/kernel';
import { PARTNER_API_KEYS, PartnerApiKeyView } from '@deals/accounts';
import { Injectable, Logger } from '@nestjs/common';
import {
  BulkJob,
  bulkJobDecider,
  bulkJobQueueDecider,
  chunkToRun,
  isLastRun,
  knownJob,
  KnownBulkJob,
  nextChunk,
} from '../domain/bulk-job.decider';
import { BulkItemResult, BulkJobItemsAdded, bulkJobItemsOwner, bulkJobQueueStream, bulkJobStream } from '../domain/bulk-job.events';
import { BulkItems, TOO_LARGE } from '../items/bulk-items';
import { BULK_JOB_ITEMS, BulkJobItemView, doneKey } from '../projections/bulk-job-items/bulk-job-items.projection';
import { BULK_JOBS, BulkJobView, OPEN_BULK_JOB_STATUSES } from '../projections/bulk-jobs/bulk-jobs.projection';

export const RUN_BULK_CHUNK_JOB = 'run-bulk-chunk';
export const SWEEP_BULK_JOBS_JOB = 'sweep-bulk-jobs';
/** Items of a chunk run at once: their writes share the store's commits, and the rest of the service keeps its share of the process. */
const ITEMS_AT_ONCE = 32;
/** Jobs whose items a process keeps read (a job's chunks run one after the other, mostly in one process). */
const JOBS_KEPT = 4;
/** While jobs are open, every open job's next step is armed again this often: a step whose tries all failed (a store away) goes on. */
const SWEEP_MS = 60_000;
const SYSTEM: CommandCaller = { actor: 'system' };
/** References looked up in one query of the items done before. */
const DONE_LOOKUP = 2000;

/**
 * Runs the partners' bulk jobs in the background, a chunk of items at a time, each chunk a job of
 * the scheduler (timers embedded, BullMQ distributed): a partner's jobs one after the other, in the
 * order accepted; each chunk's results recorded once on the job's stream, then the next chunk
 * armed; after the last, the job completed and left the queue, the partner's next job armed, and
 * the key its items are sealed under deleted (they are unreadable from then on). A process that
 * stops mid-chunk loses no item: the chunk's results were not recorded, so it runs again, and its
 * items find what their first run did (see `BulkItems`). Every open job's next step is armed again
 * when a job-running process starts, and every minute while jobs are open.
 */
@Injectable()
export class BulkJobRunner {
  private readonly logger = new Logger('BulkJobs');
  private readonly items = new RecentMap<string, JobItems>(JOBS_KEPT);
  private readonly done = new RecentMap<string, Map<string, BulkJobItemView>>(JOBS_KEPT);

  constructor(
    private readonly scheduler: Scheduler,
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly bulkItems: BulkItems,
    private readonly progress: ViewProgress,
    private readonly views: ViewStore,
    private readonly personalData: PersonalDataEventStore,
  ) {
    this.scheduler.handle(RUN_BULK_CHUNK_JOB, (job) => this.runChunk(String(job.data.jobId), job.data.step as number | 'end' | undefined));
    this.scheduler.handle(SWEEP_BULK_JOBS_JOB, () => this.rearm());
  }

  /**
   * Arms every open job's next step, and deletes the items' keys a stopped process left (called
   * when a job-running process starts, and by the sweep while jobs are open).
   */
  async rearm(): Promise<void> {
    const open = await this.views.find<BulkJobView>(BULK_JOBS, { status: { $in: [...OPEN_BULK_JOB_STATUSES] } });
    for (const partnerId of new Set(open.map((job) => job.partnerId))) await this.armQueue(partnerId);
    for (const job of await this.views.find<BulkJobView>(BULK_JOBS, { status: { $in: ['completed', 'cancelled'] }, itemsErased: false }))
      await this.eraseItems(job._id);
    if (open.length > 0) await this.sweepLater();
  }

  /** Arms the next step of the job's partner's first open job (this job, once its turn has come). */
  async arm(jobId: string): Promise<void> {
    const job = await this.job(jobId);
    if (job.status !== 'none') await this.armQueue(job.partnerId);
  }

  /**
   * After a cancellation: a job it completed (one not started) leaves its partner's queue at once,
   * its items' key deleted, and the next job is armed; a running one's next step is armed, which
   * completes it once its chunk under way (if any) is recorded.
   */
  async cancelled(jobId: string): Promise<void> {
    const job = await this.job(jobId);
    if (job.status === 'completed') await this.leaveQueue(job.partnerId, jobId);
    await this.arm(jobId);
  }

  /**
   * Cancels a job whose key was revoked, as the partner's cancel call does (its reason
   * `credential_revoked`), and moves its queue on; nothing for a job completed or cancelled already.
   */
  async revokedKeyCancels(jobId: string, partnerId: string): Promise<void> {
    const job = await this.job(jobId);
    if (job.status === 'none' || job.status === 'completed' || job.cancelled) return;
    await this.cancelForRevokedKey(jobId, partnerId);
    await this.cancelled(jobId);
  }

  private async cancelForRevokedKey(jobId: string, partnerId: string): Promise<KnownBulkJob> {
    const { state } = await handleCommand(
      this.store,
      bulkJobStream(jobId),
      bulkJobDecider,
      { type: 'CancelBulkJob', data: { jobId, partnerId, reason: 'credential_revoked' } },
      { now: this.clock.now(), metadata: SYSTEM },
    );
    this.logger.log(`bulk job ${jobId} cancelled: the API key that sent it was revoked`);
    return knownJob(state);
  }

  /** Whether the API key that sent the job is revoked (a key that expired as planned leaves its jobs to run). */
  private async keyRevoked(job: KnownBulkJob): Promise<boolean> {
    if (job.keyId === null) return false;
    const key = await this.views.findOne<PartnerApiKeyView>(PARTNER_API_KEYS, { partnerId: job.partnerId, keyId: job.keyId });
    return key !== null && key.revokedAt !== null;
  }

  /**
   * Arms the next chunk (or the completion) of the partner's first open job. A first job that is
   * completed (a process stopped before it left the queue) or was never written (a store that
   * writes stream by stream failed between the two) leaves the queue here, and the next is armed.
   */
  private async armQueue(partnerId: string): Promise<void> {
    for (;;) {
      const { state: queue } = await loadCachedAggregate(this.store, bulkJobQueueStream(partnerId), bulkJobQueueDecider);
      const head = queue.open[0];
      if (head === undefined) return;
      const job = await this.job(head);
      if (job.status === 'accepted' || job.status === 'running') {
        const step = stepOf(job);
        await this.scheduler.schedule({
          id: `bulk-${head}-${step}`,
          kind: RUN_BULK_CHUNK_JOB,
          runAt: this.clock.now(),
          data: { jobId: head, step },
        });
        return this.sweepLater();
      }
      await this.leaveQueue(partnerId, head);
    }
  }

  /** Runs the job's next chunk whose results are not recorded, or completes it; nothing unless it is its partner's first open job. */
  async runChunk(jobId: string, step?: number | 'end'): Promise<void> {
    const context = () => ({ now: this.clock.now(), metadata: SYSTEM });
    const loaded = await this.job(jobId);
    if (loaded.status !== 'accepted' && loaded.status !== 'running') return;
    let job: KnownBulkJob = loaded;
    const { state: queue } = await loadCachedAggregate(this.store, bulkJobQueueStream(job.partnerId), bulkJobQueueDecider);
    if (queue.open[0] !== jobId) return;
    // An arming of a step done meanwhile (its id armed again while it ran, run once it ended): the
    // step after it was armed by its run, and must not run twice at once.
    if (step !== undefined && step !== stepOf(job)) return;
    // The key that sent it revoked (its cancellation missed, or not made yet): cancelled before anything more runs.
    if (!job.cancelled && (await this.keyRevoked(job))) job = await this.cancelForRevokedKey(jobId, job.partnerId);
    if (job.status === 'accepted' && !job.cancelled) {
      // Its turn: the earlier jobs' items are in the view, for the references done there.
      await this.progress.waitFor([BULK_JOB_ITEMS], await this.store.head());
      job = knownJob(
        (await handleCommand(this.store, bulkJobStream(jobId), bulkJobDecider, { type: 'StartBulkJob', data: { jobId } }, context())).state,
      );
    }
    // Cancelled (before its start, or while it ran): no chunk starts; it completes below.
    const chunk = chunkToRun(job);
    if (job.status === 'completed') return this.armQueue(job.partnerId);
    if (chunk !== null) {
      let results: BulkItemResult[];
      try {
        results = await this.results(jobId, job, chunk, isLastRun(job, chunk));
      } catch (error) {
        // Counted (if the log takes the record), then run again by the scheduler or the sweep.
        await handleCommand(
          this.store,
          bulkJobStream(jobId),
          bulkJobDecider,
          { type: 'RecordChunkFailure', data: { jobId, chunk } },
          context(),
        ).catch(() => undefined);
        throw error;
      }
      job = knownJob(
        (
          await handleCommand(
            this.store,
            bulkJobStream(jobId),
            bulkJobDecider,
            { type: 'RecordBulkChunk', data: { jobId, chunk, results } },
            context(),
          )
        ).state,
      );
      if (chunkToRun(job) !== null) return this.arm(jobId);
    }
    const { partnerId } = job;
    await handleCommands(
      this.store,
      [
        { streamId: bulkJobStream(jobId), decider: bulkJobDecider, command: { type: 'CompleteBulkJob', data: { jobId } } },
        {
          streamId: bulkJobQueueStream(partnerId),
          decider: bulkJobQueueDecider,
          command: { type: 'DequeueBulkJob', data: { partnerId, jobId } },
        },
      ],
      context(),
    );
    this.items.delete(jobId);
    this.done.delete(jobId);
    // The next job first: a key store away must not hold the partner's jobs back (the sweep deletes the key later).
    await this.armQueue(partnerId);
    await this.eraseItems(jobId);
  }

  /** The job leaves its partner's queue (completed, or never written), its items' key deleted once it is completed. */
  private async leaveQueue(partnerId: string, jobId: string): Promise<void> {
    await handleCommand(
      this.store,
      bulkJobQueueStream(partnerId),
      bulkJobQueueDecider,
      { type: 'DequeueBulkJob', data: { partnerId, jobId } },
      { now: this.clock.now(), metadata: SYSTEM },
    );
    this.items.delete(jobId);
    this.done.delete(jobId);
    if ((await this.job(jobId)).status === 'completed') await this.eraseItems(jobId);
  }

  /** Deletes the key a completed job's items are sealed under, and records it; a failure is logged and tried again by the sweep. */
  private async eraseItems(jobId: string): Promise<void> {
    try {
      await this.personalData.erase(bulkJobItemsOwner(jobId), this.clock.now());
      await handleCommand(
        this.store,
        bulkJobStream(jobId),
        bulkJobDecider,
        { type: 'RecordItemsErased', data: { jobId } },
        { now: this.clock.now(), metadata: SYSTEM },
      );
    } catch (error) {
      this.logger.warn(`bulk job ${jobId}: the key of its items is not deleted yet (tried again within a minute): ${String(error)}`);
      await this.sweepLater().catch(() => undefined);
    }
  }

  /** Arms the sweep a minute from now (once: a sweep armed already keeps its time). */
  private sweepLater(): Promise<void> {
    return this.scheduler.schedule({
      id: SWEEP_BULK_JOBS_JOB,
      kind: SWEEP_BULK_JOBS_JOB,
      runAt: new Date(this.clock.now().getTime() + SWEEP_MS),
      data: {},
    });
  }

  private async job(jobId: string): Promise<BulkJob> {
    return (await loadCachedAggregate(this.store, bulkJobStream(jobId), bulkJobDecider)).state;
  }

  /** Runs a chunk's items, {@link ITEMS_AT_ONCE} at a time; an item whose reference an earlier job did is not run again. */
  private async results(jobId: string, job: KnownBulkJob, chunk: number, lastRun: boolean): Promise<BulkItemResult[]> {
    const { chunks, oversize } = await this.itemsOf(jobId);
    const items = chunks[chunk];
    const { partnerId, kind } = job;
    const keys = items.map((item) => doneKey(partnerId, kind, String(item.reference)));
    const doneBefore = await this.doneBefore(jobId, job);
    const first = chunk * job.chunkSize;
    const results: BulkItemResult[] = new Array(items.length);
    let next = 0;
    let failed = false;
    const work = async () => {
      // After one item failed (the chunk is run again), the others start no more.
      for (let i = next++; i < items.length && !failed; i = next++) {
        const index = first + i;
        const reference = String(items[i].reference);
        const earlier = doneBefore.get(keys[i]);
        if (earlier) {
          results[i] = { index, reference, status: 'already_done', resourceId: earlier.resourceId, doneBy: earlier.jobId, error: null };
          continue;
        }
        if (oversize.has(index)) {
          results[i] = { index, reference, status: 'failed', resourceId: null, doneBy: null, error: TOO_LARGE };
          continue;
        }
        try {
          const outcome = await this.bulkItems.run(
            kind,
            {
              jobId,
              index,
              fields: items[i],
              caller: { actor: `partner:${partnerId}`, partnerId },
            },
            lastRun,
          );
          results[i] = { index, reference, doneBy: null, ...outcome };
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(ITEMS_AT_ONCE, items.length) }, work));
    return results;
  }

  /**
   * The items of earlier jobs of the partner and kind that did one of this job's references, by
   * their key: read once a process for the whole job (a query per chunk would also wait, each time,
   * for the chunk before's results to be written to the view).
   */
  private async doneBefore(jobId: string, job: KnownBulkJob): Promise<Map<string, BulkJobItemView>> {
    const kept = this.done.get(jobId);
    if (kept) return kept;
    const keys = (await this.itemsOf(jobId)).chunks.flat().map((item) => doneKey(job.partnerId, job.kind, String(item.reference)));
    const done = new Map<string, BulkJobItemView>();
    for (let from = 0; from < keys.length; from += DONE_LOOKUP) {
      const found = await this.views.find<BulkJobItemView>(BULK_JOB_ITEMS, { done: { $in: keys.slice(from, from + DONE_LOOKUP) } });
      for (const item of found) if (item.jobId !== jobId && !done.has(item.done!)) done.set(item.done!, item);
    }
    this.done.set(jobId, done);
    return done;
  }

  /** The job's items by chunk, read once a process (they are sealed in the log: opened with the job's key). */
  private async itemsOf(jobId: string): Promise<JobItems> {
    const kept = this.items.get(jobId);
    if (kept) return kept;
    const found = { chunks: [] as JobItems['chunks'], oversize: new Set<number>() };
    for (const event of await this.store.readStream(bulkJobStream(jobId)))
      if (event.type === 'BulkJobItemsAdded') {
        const { chunk, items, oversize } = (event as unknown as BulkJobItemsAdded).data;
        if (!Array.isArray(items)) throw new Error(`bulk job ${jobId}: the items of chunk ${chunk} are unreadable (their key is deleted)`);
        // A chunk's items may come in several parts, in order.
        (found.chunks[chunk] ??= []).push(...items);
        for (const index of oversize ?? []) found.oversize.add(index);
      }
    this.items.set(jobId, found);
    return found;
  }
}

/** The id's step of a job's next arming: the chunk it runs next, or its completion. */
const stepOf = (job: BulkJob): number | 'end' => (job.status === 'accepted' ? nextChunk(job) : chunkToRun(job)) ?? 'end';

/** A job's items by chunk, and the places of those kept as their reference alone (larger than their call takes). */
interface JobItems {
  chunks: Array<Array<Record<string, unknown>>>;
  oversize: ReadonlySet<number>;
}
