import { servicePool } from '../../postgres-pool';
import {
  CheckpointListener,
  FindOptions,
  IndexSpec,
  LogPosition,
  RebuildTarget,
  ViewBatch,
  ViewDocument,
  ViewFilter,
  ViewStore,
  ViewWriter,
} from '@deals/kernel';
import { Pool } from 'pg';
import { sortDocuments } from '../mingo/sort-order';
import { FIRST_GENERATION, newGeneration, POLL_MS, ServerGenerations, settleOnce } from '../server-generations';
import { PostgresViewLeases } from './postgres-view-leases';
import { CheckpointNotices, checkpointOf } from './postgres-view-notices';
import { LookupsById, matching } from './postgres-view-reads';
import { PostgresViewTables, table } from './postgres-view-tables';
import type { InlineDocuments, InlineViewTables, InlineWrites } from '../../event-store/postgres/inline-views';
import { commitStatement, compareIds, GenerationBatch, inlineWrites, WritesAhead } from './postgres-view-writes';

/**
 * The read side on PostgreSQL (`DATABASE_URL`): one table per generation of a collection, a
 * document per row (`id`, `pos`, `doc` as JSONB) with a GIN index on the documents, the active
 * generation in `view_generations` and each generation's checkpoint in `view_checkpoints`
 * (postgres-view-tables.ts). A commit, of one collection or of several (`commitAll`), is one
 * statement, so one transaction: its documents (position-guarded upserts: replaying changes
 * nothing), its checkpoints (never back) and a notice of the checkpoints reached
 * (postgres-view-writes.ts), which `onCheckpoints` listeners in every process hear through one
 * LISTEN connection a process (postgres-view-notices.ts). Queries run the filter's top-level
 * equalities in SQL and the whole filter, sort, skip and limit with mingo over the rows they
 * select, so both view stores answer every query alike (postgres-view-reads.ts).
 */
export class PostgresViewStore extends ViewStore implements InlineViewTables {
  readonly backend = 'postgresql';
  override readonly tellsOfCheckpoints = true;
  private readonly pool: Pool;
  private closed = false;
  private readonly tables: PostgresViewTables;
  private readonly active = new ServerGenerations((collection, generation) => this.tables.drop(collection, generation));
  /** The tables of this process's rebuilds not yet activated: no reader waits on their checkpoints, so no notice tells them. */
  private readonly building = new Set<string>();
  private readonly poller: NodeJS.Timeout;
  private readonly notices: CheckpointNotices;
  private readonly byId: LookupsById;
  private readonly ahead: WritesAhead;
  private viewLeases: PostgresViewLeases | null = null;

  constructor(private readonly url: string) {
    super();
    // Small, as the event store's: replicas, a worker and a CLI share the server's connections.
    this.pool = servicePool(url, 6);
    this.tables = new PostgresViewTables(this.pool, url);
    this.notices = new CheckpointNotices(url, this.active);
    this.byId = new LookupsById(this.pool);
    this.ahead = new WritesAhead(this.pool, this.active, () => void this.poll());
    this.poller = setInterval(() => void this.poll(), POLL_MS).unref();
  }

  async define(collection: string, indexes: IndexSpec[]): Promise<void> {
    this.tables.define(collection, indexes);
    await this.tables.meta();
    const found = await this.pool.query<{ generation: string }>(
      `INSERT INTO view_generations (collection, generation) VALUES ($1, $2)
       ON CONFLICT (collection) DO UPDATE SET generation = view_generations.generation RETURNING generation`,
      [collection, FIRST_GENERATION],
    );
    const generation = found.rows[0].generation;
    await this.tables.create(collection, generation);
    this.active.defined(collection, generation);
  }

  async findById<T extends ViewDocument>(collection: string, id: string): Promise<T | null> {
    return (await this.byId.load(this.live(collection), id)) as T | null;
  }

  async findByIds<T extends ViewDocument>(collection: string, ids: readonly string[]): Promise<T[]> {
    return (await this.byId.loadMany(this.live(collection), ids)) as T[];
  }

  async findOne<T extends ViewDocument>(collection: string, filter: ViewFilter): Promise<T | null> {
    return (await this.find<T>(collection, filter, { limit: 1 }))[0] ?? null;
  }

  async find<T extends ViewDocument>(collection: string, filter: ViewFilter, options: FindOptions = {}): Promise<T[]> {
    const matched = await this.matching<T>(collection, filter);
    const sorted = options.sort ? sortDocuments(matched, options.sort) : matched.sort(compareIds);
    const skip = options.skip ?? 0;
    // A limit of 0 is no limit, as in MongoDB.
    return sorted.slice(skip, options.limit ? skip + options.limit : undefined);
  }

  async count(collection: string, filter: ViewFilter): Promise<number> {
    return (await this.matching(collection, filter)).length;
  }

  /** The documents the filter matches: SQL selects by its top-level equalities, mingo decides. */
  private matching<T extends ViewDocument>(collection: string, filter: ViewFilter): Promise<T[]> {
    return matching<T>(this.pool, this.live(collection), this.tables.keysOf(collection), filter);
  }

  writer(collection: string): ViewWriter {
    return this.generationWriter(collection, this.active.of(collection));
  }

  async beginRebuild(collection: string): Promise<RebuildTarget> {
    this.active.of(collection);
    const generation = newGeneration();
    await this.tables.create(collection, generation, { indexed: false });
    this.building.add(table(collection, generation));
    let indexed: Promise<void> | null = null;
    const complete = (): Promise<void> => (indexed ??= this.tables.buildIndex(collection, generation));
    const settle = settleOnce(`${collection}/${generation}`);
    return {
      ...this.generationWriter(collection, generation),
      complete,
      activate: async () => {
        await complete();
        settle('activated');
        this.building.delete(table(collection, generation));
        await this.active.activate(collection, generation, async () => {
          const before = await this.pool.query<{ generation: string }>(
            `UPDATE view_generations SET generation = $2 WHERE collection = $1
             RETURNING (SELECT generation FROM view_generations WHERE collection = $1) AS generation`,
            [collection, generation],
          );
          return before.rows[0]?.generation;
        });
      },
      abandon: async () => {
        settle('abandoned');
        this.building.delete(table(collection, generation));
        await this.tables.drop(collection, generation);
      },
    };
  }

  async status(): Promise<
    Array<{ collection: string; generation: string; checkpoint: LogPosition | null; documents: number; bytes: number }>
  > {
    return Promise.all(
      [...this.active.entries()].map(async ([collection, generation]) => {
        const [checkpoint, counted] = await Promise.all([
          checkpointOf(this.pool, table(collection, generation)),
          this.pool.query<{ n: string; bytes: string }>(
            `SELECT count(*)::text AS n, pg_total_relation_size($1::regclass)::text AS bytes FROM ${table(collection, generation)}`,
            [table(collection, generation)],
          ),
        ]);
        return { collection, generation, checkpoint, documents: Number(counted.rows[0].n), bytes: Number(counted.rows[0].bytes) };
      }),
    );
  }

  /** All the batches in one statement (see {@link commitStatement}). */
  override async commitAll(batches: readonly ViewBatch[]): Promise<void> {
    await this.commitBatches(
      batches.map(({ writer, ...batch }) => ({ ...batch, collection: writer.collection, generation: writer.generation })),
    );
  }

  private async commitBatches(batches: readonly GenerationBatch[]): Promise<void> {
    if (batches.length === 0) return;
    for (const { collection, generation } of batches) this.active.checkWritable(collection, generation);
    const { text, params } = commitStatement(batches, this.building);
    await this.pool.query(text, params);
  }

  /** See {@link WritesAhead}. */
  override writeAhead(batches: ReadonlyArray<{ collection: string; documents: readonly ViewDocument[] }>): Promise<boolean> {
    return this.ahead.write(batches);
  }

  /** The clauses of an append's statement that write its views (see {@link inlineWrites}). */
  inlineWrites(views: InlineDocuments, param: (value: unknown) => string, positions: string): InlineWrites | null {
    return inlineWrites(this.active, views, param, positions);
  }

  override leases(): PostgresViewLeases {
    return (this.viewLeases ??= new PostgresViewLeases(this.pool, () => this.tables.meta()));
  }

  override onCheckpoints(listener: CheckpointListener): () => void {
    return this.notices.add(listener);
  }

  onGenerationSwitch(listener: (collection: string) => void): () => void {
    return this.active.onSwitch(listener);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    // Closing twice is closing once.
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poller);
    await this.notices.close();
    await this.active.settled();
    await this.pool.end();
  }

  /** The active generation's table. */
  private live(collection: string): string {
    return table(collection, this.active.of(collection));
  }

  private generationWriter(collection: string, generation: string): ViewWriter {
    const name = table(collection, generation);
    return {
      collection,
      generation,
      getMany: async <T extends ViewDocument>(ids: string[]) => {
        // With the other look-ups of the turn (a page's other views'), in one statement.
        const docs = await this.byId.loadMany(name, ids);
        return new Map(docs.map((doc) => [doc._id, doc as T]));
      },
      commit: async <T extends ViewDocument>(documents: readonly T[], checkpoint: LogPosition) => {
        await this.commitBatches([{ collection, generation, documents, checkpoint }]);
      },
      checkpoint: () => checkpointOf(this.pool, name),
    };
  }

  /** Reopens a lost LISTEN connection and switches to the generations other processes activated. */
  private poll(): Promise<void> {
    this.notices.relisten();
    return this.active.poll(async (collections) => {
      const found = await this.pool.query<{ collection: string; generation: string }>(
        'SELECT collection, generation FROM view_generations WHERE collection = ANY($1::text[])',
        [collections],
      );
      return found.rows;
    });
  }
}
