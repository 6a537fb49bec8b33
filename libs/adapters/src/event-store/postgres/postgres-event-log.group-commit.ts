import { AppendResult, checkStreamAppends, FairSlots, InlineViews, StoreBusy, StoreObserver, StreamAppend } from '@deals/kernel';
import { Pool } from 'pg';
import { PostgresLogSchema } from './postgres-event-log.schema';
import { GroupRetry, PendingUnit } from './postgres-event-log.append-sql';
import { writeStatement } from './postgres-event-log.group-statement';
import { writeOnce } from './postgres-event-log.write-once';
import type { InlineViewTables } from './inline-views';

/** Appends of a group decided again, at most, when a conflict with another transaction showed only once written. */
const GROUP_ATTEMPTS = 5;
/** No documents written. */
const NONE: ReadonlySet<string> = new Set();

/**
 * Connections a store keeps at most. Appends take one at a time (group commit), reads the rest;
 * kept small so that replicas, a worker and a CLI fit in PostgreSQL's default 100 connections.
 */
export const POOL_SIZE = 8;

/** Appends written together in one transaction, at most. */
const MAX_GROUP = 500;

/** Transactions holding a stream at once (see `appendHolding`): half the pool, the rest left to reads. */
const HOLDS = POOL_SIZE / 2;

/**
 * The log's appends: the units waiting written together, one transaction a group (group commit),
 * and the transactions that hold a stream for a decision.
 */
export class PostgresGroupCommit {
  /** Appends waiting for the next group, and whether a group is being written. */
  private readonly pending: PendingUnit[] = [];
  private flushing = false;
  /** The transactions of {@link appendHolding} under way, each with one connection. */
  private readonly holds = new FairSlots(HOLDS);

  constructor(
    private readonly pool: Pool,
    private readonly schema: PostgresLogSchema,
    private readonly observer: StoreObserver | null,
    /** Where documents given with appends are written: the view store of the same database, once given. */
    private readonly inlineViews: () => InlineViewTables | null,
  ) {}

  async enqueue(
    appends: readonly StreamAppend[],
    views?: InlineViews,
    told?: (written: ReadonlySet<string>) => void,
  ): Promise<AppendResult[]> {
    await this.schema.made();
    return new Promise((resolve, reject) => {
      const done = (results: AppendResult[], written: ReadonlySet<string>) => {
        told?.(written);
        resolve(results);
      };
      this.pending.push({ appends, views, resolve: done, reject });
      // The first group leaves at the end of this turn of the loop, so that the appends its code
      // starts together (a purchase's lock, record and hold) share one commit instead of two.
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Writes the units waiting, as groups of at most {@link MAX_GROUP}, one transaction each, until none waits. */
  private async flush(): Promise<void> {
    try {
      while (this.pending.length) await this.writeGroup(this.pending.splice(0, MAX_GROUP));
    } finally {
      this.flushing = false;
    }
  }

  /**
   * One transaction for a group of units (group commit: one commit for them all). The rows of the
   * streams it writes are locked first, in one order (no deadlock between groups), so no other
   * transaction changes them meanwhile; each append's expected revision is checked against them,
   * in arrival order, and a refused unit fails alone. Started again, whole, when another
   * transaction turns out to have written one of its streams since this one began (see
   * {@link writeOnce}).
   */
  private async writeGroup(group: PendingUnit[]): Promise<void> {
    const started = performance.now();
    let left = group;
    for (let attempt = 1; left.length; attempt++) {
      try {
        const streams = left.flatMap((unit) => unit.appends.map((a) => a.streamId));
        const distinct = new Set(streams).size === streams.length;
        const {
          written,
          refused,
          again = [],
        } = distinct ? await writeStatement(left, this.pool, this.inlineViews()) : await writeOnce(this.pool, left);
        for (const { unit, error } of refused) unit.reject(error);
        const appends = written.reduce((sum, { unit }) => sum + unit.appends.length, 0);
        if (appends) this.observer?.committed(appends, (performance.now() - started) / 1000);
        for (const { unit, results, documents } of written) {
          for (const append of unit.appends) this.observer?.appended(append.events);
          unit.resolve(results, documents ?? NONE);
        }
        if (again.length && attempt >= GROUP_ATTEMPTS) throw new GroupRetry('another transaction created one of the streams first');
        left = again;
      } catch (error) {
        if (error instanceof GroupRetry && attempt < GROUP_ATTEMPTS) {
          // Other processes' transactions on these streams: let them through before the next try.
          if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** attempt));
          continue;
        }
        const failure =
          error instanceof GroupRetry ? new StoreBusy(`appends not ordered after ${GROUP_ATTEMPTS} tries: ${error.message}`) : error;
        for (const unit of left) unit.reject(failure);
        return;
      }
    }
  }

  /**
   * The appends `decide` returns, written in a transaction that first locks `held`'s stream row:
   * every other append to that stream (each locks the row first too) waits from the moment `decide`
   * is called until this commits, so what `decide` reads of it (on any connection: the lock is taken
   * after every earlier write committed) is what the write finds. Nothing is written, and StoreBusy
   * thrown, when a later transaction wrote one of the other streams first or made one of its new
   * streams meanwhile. At most {@link HOLDS} at once, so that the reads of `decide` find connections.
   */
  async appendHolding(held: string, decide: () => Promise<readonly StreamAppend[]>): Promise<AppendResult[]> {
    await this.schema.made();
    return this.holds.run(held, async () => {
      const started = performance.now();
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        await client.query({
          name: 'deals_hold_stream',
          text: 'SELECT 1 FROM event_streams WHERE stream_id = $1 FOR UPDATE',
          values: [held],
        });
        const appends = await decide();
        if (!appends.length) {
          await client.query('ROLLBACK');
          return [];
        }
        checkStreamAppends(appends);
        const { written, refused, again } = await writeStatement([{ appends }], client, this.inlineViews()).catch((error: unknown) => {
          throw error instanceof GroupRetry ? new StoreBusy(error.message) : error;
        });
        if (refused.length) throw refused[0].error;
        if (again?.length) throw new StoreBusy('another transaction created the stream first');
        await client.query('COMMIT');
        this.observer?.committed(appends.length, (performance.now() - started) / 1000);
        for (const append of appends) this.observer?.appended(append.events);
        return written[0].results;
      } catch (error) {
        await client.query('ROLLBACK').catch((failed: Error) => (broken = failed));
        throw error;
      } finally {
        client.release(broken);
      }
    });
  }
}
