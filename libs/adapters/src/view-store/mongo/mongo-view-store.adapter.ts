import {
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
import { Collection, Db, Filter, MongoBulkWriteError, MongoClient, MongoServerError, type AnyBulkWriteOperation } from 'mongodb';
import { FIRST_GENERATION, keepNewest, newGeneration, POLL_MS, ServerGenerations, settleOnce } from '../server-generations';
import { splitGeo } from './geo-in-process';
import { fromStored, toStored } from './stored-document';

const DUPLICATE_KEY = 11000;

/**
 * An upsert by `_id`, once more if it raced another process's first insert of that `_id`: MongoDB
 * retries such an upsert itself, FerretDB answers it with a duplicate key (processes defining their
 * views as they start together). The second finds the document.
 */
async function againOnDuplicate<T>(upsert: () => Promise<T>): Promise<T> {
  try {
    return await upsert();
  } catch (error) {
    const writeErrors = error instanceof MongoBulkWriteError ? ([] as Array<{ code: number }>).concat(error.writeErrors) : [];
    const duplicate =
      error instanceof MongoBulkWriteError
        ? writeErrors.length > 0 && writeErrors.every((e) => e.code === DUPLICATE_KEY)
        : error instanceof MongoServerError && error.code === DUPLICATE_KEY;
    if (!duplicate) throw error;
    return upsert();
  }
}

/**
 * The filter, refused if a condition in it is `undefined`: the client leaves undefined values out
 * (`ignoreUndefined`, there for the documents), and in a query that drops the condition, so that
 * `{ userId: undefined, partnerId }` would match every user of the partner (mingo matches none).
 */
function definedFilter(filter: ViewFilter): Filter<ViewDocument> {
  const check = (value: unknown, path: string): void => {
    if (value === undefined) throw new Error(`view query: the condition at ${path} is undefined`);
    if (Array.isArray(value)) value.forEach((item, i) => check(item, `${path}[${i}]`));
    else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      for (const [key, inner] of Object.entries(value)) check(inner, path ? `${path}.${key}` : key);
    }
  };
  check(filter, '');
  return filter as Filter<ViewDocument>;
}

interface GenerationDoc {
  _id: string;
  generation: string;
}
interface CheckpointDoc {
  _id: string;
  position: string;
  updatedAt: Date;
}

/**
 * Documents by id, one lone `_id` equality each, side by side: the one filter FerretDB 1.24 hands to
 * its backend's index (over SQLite) or SQL (over PostgreSQL); any other, `$in` included, has it read
 * the whole collection into its own process. MongoDB serves either from its `_id` index.
 */
async function byIds<T extends ViewDocument>(target: Collection<ViewDocument>, ids: readonly string[]): Promise<Map<string, T>> {
  const found = await Promise.all([...new Set(ids)].map((id) => target.findOne({ _id: id })));
  return new Map(found.filter((doc) => doc !== null).map((doc) => [doc._id, fromStored(doc as T)]));
}

const physical = (collection: string, generation: string) => `${collection}__${generation}`;

/**
 * The read side on MongoDB through the official `mongodb` driver (7.x).
 *
 * Each collection lives in generations: `<collection>__<generation>`, the active one named in
 * `view_generations`, its checkpoint in `view_checkpoints`. A rebuild fills a fresh generation and
 * activates it with one single-document update, so readers switch atomically; other processes
 * notice within {@link POLL_MS} and the old generation is dropped once they have
 * ({@link ServerGenerations}).
 * Writes are position-guarded upserts, so replaying events changes nothing; the documents and the
 * checkpoint are two writes (no transaction, which would need a replica set), checkpoint last, and
 * the checkpoint never moves back.
 * It keeps to what MongoDB and FerretDB (its wire protocol over SQLite or PostgreSQL) both do:
 * `$geoWithin` is answered in this process ({@link splitGeo}), `2dsphere` indexes are not made, a
 * document FerretDB could not hold is stored escaped ({@link toStored}), and no update stores one.
 */
export class MongoViewStore extends ViewStore {
  readonly backend = 'mongodb';
  override readonly storesCheckpointsTogether = true;
  private readonly client: MongoClient;
  private readonly db: Db;
  private readonly generations: Collection<GenerationDoc>;
  private readonly checkpoints: Collection<CheckpointDoc>;
  /** The generations read; writing into a replaced one would recreate a dropped collection. */
  private readonly active = new ServerGenerations((collection, generation) => this.dropGeneration(collection, generation));
  private readonly indexes = new Map<string, IndexSpec[]>();
  private readonly poller: NodeJS.Timeout;

  constructor(url: string, dbName: string) {
    super();
    // Undefined fields are left out, as in JSON, so both view stores return the same documents.
    this.client = new MongoClient(url, { ignoreUndefined: true });
    this.db = this.client.db(dbName);
    this.generations = this.db.collection<GenerationDoc>('view_generations');
    this.checkpoints = this.db.collection<CheckpointDoc>('view_checkpoints');
    this.poller = setInterval(() => void this.poll(), POLL_MS).unref();
  }

  async define(collection: string, indexes: IndexSpec[]): Promise<void> {
    this.indexes.set(collection, indexes);
    const meta = await againOnDuplicate(() =>
      this.generations.findOneAndUpdate(
        { _id: collection },
        { $setOnInsert: { generation: FIRST_GENERATION } },
        { upsert: true, returnDocument: 'after' },
      ),
    );
    const generation = meta?.generation ?? FIRST_GENERATION;
    this.active.defined(collection, generation);
    await this.createIndexes(collection, generation);
  }

  async findById<T extends ViewDocument>(collection: string, id: string): Promise<T | null> {
    return fromStored((await this.live(collection).findOne(definedFilter({ _id: id }))) as T | null);
  }

  async findByIds<T extends ViewDocument>(collection: string, ids: readonly string[]): Promise<T[]> {
    if (ids.length === 0) return [];
    const found = await byIds<T>(this.live(collection), ids);
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  async findOne<T extends ViewDocument>(collection: string, filter: ViewFilter): Promise<T | null> {
    const { server, local } = splitGeo(definedFilter(filter));
    if (!local) return fromStored((await this.live(collection).findOne(server)) as T | null);
    return ((await this.find<T>(collection, filter, { limit: 1 }))[0] as T | undefined) ?? null;
  }

  async find<T extends ViewDocument>(collection: string, filter: ViewFilter, options: FindOptions = {}): Promise<T[]> {
    const { sort, skip, limit } = options;
    const { server, local } = splitGeo(definedFilter(filter));
    if (!local) return (await this.live(collection).find(server, { sort, skip, limit }).toArray()).map((doc) => fromStored(doc as T));
    // The server's matches in order, tested here, skipped and limited as they come (a limit of 0 is none, as in MongoDB).
    const found: T[] = [];
    let skipping = skip ?? 0;
    for await (const stored of this.live(collection).find(server, { sort })) {
      const doc = fromStored(stored);
      if (!local(doc)) continue;
      if (skipping > 0) skipping--;
      else if (found.push(doc as T) === limit) break;
    }
    return found;
  }

  async count(collection: string, filter: ViewFilter): Promise<number> {
    const { server, local, localFields } = splitGeo(definedFilter(filter));
    if (!local) return this.live(collection).countDocuments(server);
    const projection = localFields && Object.fromEntries(localFields.map((field) => [field, 1]));
    let count = 0;
    for await (const doc of this.live(collection).find(server, projection ? { projection } : {})) if (local(fromStored(doc))) count++;
    return count;
  }

  writer(collection: string): ViewWriter {
    return this.generationWriter(collection, this.active.of(collection));
  }

  async beginRebuild(collection: string): Promise<RebuildTarget> {
    this.active.of(collection);
    const generation = newGeneration();
    await this.createIndexes(collection, generation);
    const settle = settleOnce(physical(collection, generation));
    return {
      ...this.generationWriter(collection, generation),
      activate: async () => {
        settle('activated');
        await this.active.activate(collection, generation, async () => {
          const before = await againOnDuplicate(() =>
            this.generations.findOneAndUpdate({ _id: collection }, { $set: { generation } }, { upsert: true, returnDocument: 'before' }),
          );
          return before?.generation;
        });
      },
      abandon: async () => {
        settle('abandoned');
        await this.dropGeneration(collection, generation);
      },
    };
  }

  async status(): Promise<Array<{ collection: string; generation: string; checkpoint: LogPosition | null; documents: number }>> {
    return Promise.all(
      [...this.active.entries()].map(async ([collection, generation]) => {
        const name = physical(collection, generation);
        const [checkpoint, documents] = await Promise.all([this.checkpointOf(name), this.db.collection(name).estimatedDocumentCount()]);
        return { collection, generation, checkpoint, documents };
      }),
    );
  }

  onGenerationSwitch(listener: (collection: string) => void): () => void {
    return this.active.onSwitch(listener);
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    clearInterval(this.poller);
    await this.active.settled();
    await this.client.close();
  }

  private live(collection: string): Collection<ViewDocument> {
    return this.db.collection(physical(collection, this.active.of(collection)));
  }

  /**
   * The collection's indexes but `2dsphere` ones: `$geoWithin` is answered here, and FerretDB has none.
   * One index a command: FerretDB 1.24 drops the connection on a `createIndexes` naming two or more
   * indexes that all exist already (what every process but the first asks as it defines its views).
   */
  private async createIndexes(collection: string, generation: string): Promise<void> {
    const target = this.db.collection(physical(collection, generation));
    for (const spec of this.indexes.get(collection) ?? [])
      if (!Object.values(spec.keys).includes('2dsphere')) await target.createIndex(spec.keys, spec.unique ? { unique: true } : {});
  }

  /**
   * Every batch's documents (collection by collection, side by side: no transaction joins them
   * anyway), then the checkpoints to store, in one write ({@link storesCheckpointsTogether}: the
   * daemon stores every view's with each page, and a waiting answer, which reads them, sees a view
   * that handled none of the page reach it at once; a reservation's answer waits for the coupons'
   * view too).
   */
  override async commitAll(batches: readonly ViewBatch[]): Promise<void> {
    if (batches.length === 0) return;
    for (const { writer } of batches) this.active.checkWritable(writer.collection, writer.generation);
    const named = batches.map((batch) => ({ ...batch, name: physical(batch.writer.collection, batch.writer.generation) }));
    await Promise.all(
      named
        .filter(({ documents }) => documents.length > 0)
        .map(({ name, documents }) => this.upsertNewer(this.db.collection<ViewDocument>(name), this.storable(documents))),
    );
    const stored = named.filter(({ store }) => store !== false);
    if (stored.length) await this.storeCheckpoints(stored);
  }

  /** Each checkpoint, never back, in one write. */
  private async storeCheckpoints(checkpoints: ReadonlyArray<{ name: string; checkpoint: LogPosition }>): Promise<void> {
    const updatedAt = new Date();
    await againOnDuplicate(() =>
      this.checkpoints.bulkWrite(
        checkpoints.map(({ name, checkpoint }) => ({
          updateOne: { filter: { _id: name }, update: { $max: { position: checkpoint }, $set: { updatedAt } }, upsert: true },
        })),
        { ordered: false },
      ),
    );
  }

  /**
   * Each collection's documents as a commit upserts them (over older ones only), with no checkpoint;
   * collection by collection (no transaction): a failure part way leaves the first written, which
   * the fold of the same events would write alike. False for a collection not defined here.
   */
  override async writeAhead(batches: ReadonlyArray<{ collection: string; documents: readonly ViewDocument[] }>): Promise<boolean> {
    if (batches.some(({ collection }) => !this.active.has(collection))) return false;
    for (const { collection, documents } of batches)
      if (documents.length) await this.upsertNewer(this.live(collection), this.storable(documents));
    return true;
  }

  private checkpointOf(name: string): Promise<LogPosition | null> {
    return this.checkpoints.findOne({ _id: name }).then((doc) => doc?.position ?? null);
  }

  private generationWriter(collection: string, generation: string): ViewWriter {
    const name = physical(collection, generation);
    const target = this.db.collection<ViewDocument>(name);
    return {
      collection,
      generation,
      getMany: async <T extends ViewDocument>(ids: string[]) => {
        return byIds<T>(target, ids);
      },
      commit: async <T extends ViewDocument>(documents: readonly T[], checkpoint: LogPosition) => {
        this.active.checkWritable(collection, generation);
        await this.upsertNewer(target, this.storable(documents));
        await this.storeCheckpoints([{ name, checkpoint }]);
      },
      checkpoint: () => this.checkpointOf(name),
    };
  }

  /** One document per `_id` (the newest), as the server can store it ({@link toStored}). */
  private storable(documents: readonly ViewDocument[]): ViewDocument[] {
    return [...keepNewest(new Map(), documents).values()].map(toStored);
  }

  /**
   * Each document over an older one only, with no error for one that is not newer. Inserted whole
   * first (unordered: each new document stored as it is); those whose `_id` is taken are then, in
   * one ordered bulk, each either found as new (a `$max` of its own position, which changes
   * nothing) or replacing an older one: one match a document. So a document is one round trip when
   * new, two when stored, and the fold rewriting what a request wrote ahead costs nothing more.
   * Not an upsert with `$setOnInsert`: FerretDB leaves out its null and empty-array fields.
   */
  private async upsertNewer(target: Collection<ViewDocument>, documents: ViewDocument[]): Promise<void> {
    if (documents.length === 0) return;
    try {
      await target.insertMany(documents, { ordered: false });
      return;
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const writeErrors = ([] as Array<{ code: number; index: number }>).concat(error.writeErrors);
      if (writeErrors.length === 0 || writeErrors.some((e) => e.code !== DUPLICATE_KEY) || error.result.getWriteConcernError()) throw error;
      const taken = writeErrors.map((e) => documents[e.index]);
      const matched = await this.replaceOlder(target, taken);
      if (matched === taken.length) return;
      // A document missing still: another unique index refused it, which must not be dropped in
      // silence (FerretDB fails the whole insert then). Or another writer moved it between the two
      // operations of its pair, which only ever makes it newer: then it is as new now.
      const stored = await target.find({ _id: { $in: taken.map((doc) => doc._id) } }, { projection: { _pos: 1 } }).toArray();
      const storedPos = new Map(stored.map((doc) => [doc._id, doc._pos]));
      if (taken.some((doc) => !(storedPos.get(doc._id)! >= doc._pos))) throw error;
    }
  }

  /** How many of `documents` were stored as new, or are now: one match each (see {@link upsertNewer}). */
  private async replaceOlder(target: Collection<ViewDocument>, documents: ViewDocument[]): Promise<number> {
    const ops: AnyBulkWriteOperation<ViewDocument>[] = documents.flatMap((doc) => [
      { updateOne: { filter: { _id: doc._id, _pos: { $gte: doc._pos } }, update: { $max: { _pos: doc._pos } } } },
      { replaceOne: { filter: { _id: doc._id, _pos: { $lt: doc._pos } }, replacement: doc } },
    ]);
    return (await target.bulkWrite(ops, { ordered: true })).matchedCount;
  }

  /** Switches to the generations other processes activated. */
  private poll(): Promise<void> {
    return this.active.poll(async (collections) => {
      const found = await this.generations.find({ _id: { $in: collections } }).toArray();
      return found.map(({ _id, generation }) => ({ collection: _id, generation }));
    });
  }

  private async dropGeneration(collection: string, generation: string): Promise<void> {
    const name = physical(collection, generation);
    await this.db.collection(name).drop();
    await this.checkpoints.deleteOne({ _id: name });
  }
}
