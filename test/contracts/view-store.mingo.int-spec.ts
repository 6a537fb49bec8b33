import { appendToStream, defineProjection, IndexSpec, rebuildProjections, SortSpec, ViewDocument } from '@deals/kernel';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import type { MessagePort, Worker } from 'node:worker_threads';
import { SqliteEventStore } from '@deals/adapters/event-store/sqlite/sqlite-event-store.adapter';
import { WalCheckpointer } from '@deals/adapters/sqlite/wal-checkpointer';
import { MingoViewStore } from '@deals/adapters/view-store/mingo/mingo-view-store.adapter';
import { DiskGeneration } from '@deals/adapters/view-store/mingo/disk-generation';
import { ViewWriteThread } from '@deals/adapters/view-store/mingo/view-write-thread';
import { viewStoreContract } from '@deals/testing/contracts/view-store.contract';
import { eventually } from '../support/eventually';
import { tempDir } from '../support/temp-dir';

/**
 * The store's health check as it would answer `ms` from now: it reads the time once, as the call
 * begins (a save failing since is reported once it has failed for `failingReportMs`).
 */
function pingLater(views: MingoViewStore, ms: number): Promise<void> {
  const moved = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + ms);
  try {
    return views.ping();
  } finally {
    moved.mockRestore();
  }
}

viewStoreContract('embedded (mingo)', async () => {
  const dir = tempDir('views');
  const views = new MingoViewStore(dir.path);
  return {
    views,
    openAgain: async () => new MingoViewStore(dir.path),
    cleanup: async () => {
      await views.close();
      dir.remove();
    },
  };
});

// The service's embedded store: collections defined without keepInMemory live on disk (DiskGeneration).
viewStoreContract('embedded, on disk', async () => {
  const dir = tempDir('views-disk');
  const open = () => new MingoViewStore(dir.path, {}, undefined, false, 'as-defined');
  const views = open();
  return {
    views,
    openAgain: async () => open(),
    cleanup: async () => {
      await views.close();
      dir.remove();
    },
  };
});

/**
 * The embedded store saves a generation's commits to its file a little after they are made (one
 * row per changed document, however many commits changed it). What a crash leaves must be a
 * consistent past: the documents of the last save with that save's checkpoint, never one without
 * the other. Another instance opened beside a live one reads the file as a restart after a crash
 * would.
 */
describe('embedded view store: saving commits to its file', () => {
  const dir = tempDir('views-save');
  afterAll(() => dir.remove());
  const pos = (n: number) => String(n).padStart(20, '0');
  const doc = (id: string, n: number, title: string) => ({ _id: id, _pos: pos(n), title });

  async function reopened(path: string, collection = 'things') {
    const again = new MingoViewStore(path);
    await again.define(collection, []);
    const state = { checkpoint: await again.writer(collection).checkpoint(), docs: await again.find(collection, {}, { sort: { _id: 1 } }) };
    await again.close();
    return state;
  }

  it('keeps the last saved documents and checkpoint together until the next save', async () => {
    const path = `${dir.path}/delayed`;
    const views = new MingoViewStore(path, { documentsMs: 60_000, checkpointMs: 60_000 });
    try {
      await views.define('things', []);
      await views.writer('things').commit([doc('a', 1, 'first'), doc('b', 2, 'first')], pos(2));
      // Not saved yet: a crash now restarts from the beginning, with no documents.
      expect(await reopened(path)).toEqual({ checkpoint: null, docs: [] });
      // Readers of this instance see the commit at once.
      expect((await views.findById<ReturnType<typeof doc>>('things', 'b'))?.title).toBe('first');
      await views.close();
      expect(await reopened(path)).toEqual({ checkpoint: pos(2), docs: [doc('a', 1, 'first'), doc('b', 2, 'first')] });
    } finally {
      await views.close();
    }
  });

  it('saves within its delay, each document once with the checkpoint reached', async () => {
    const path = `${dir.path}/timed`;
    const views = new MingoViewStore(path, { documentsMs: 20, checkpointMs: 20 });
    try {
      await views.define('things', []);
      const writer = views.writer('things');
      await writer.commit([doc('a', 1, 'first')], pos(1));
      await writer.commit([doc('a', 2, 'second'), doc('b', 3, 'first')], pos(3));
      await writer.commit([], pos(5));
      // Saved with its checkpoint: the documents are on the file once the checkpoint is.
      const saved = await eventually(
        () => reopened(path),
        (state) => state.checkpoint === pos(5),
      );
      expect(saved).toEqual({ checkpoint: pos(5), docs: [doc('a', 2, 'second'), doc('b', 3, 'first')] });
      // A checkpoint that moves alone is saved too.
      await writer.commit([], pos(9));
      const moved = await eventually(
        () => reopened(path),
        (state) => state.checkpoint === pos(9),
      );
      expect(moved.checkpoint).toBe(pos(9));
    } finally {
      await views.close();
    }
  });

  it('saves a rebuilt generation before activating it, so another process loads it whole', async () => {
    const path = `${dir.path}/rebuild`;
    const views = new MingoViewStore(path, { documentsMs: 60_000, checkpointMs: 60_000 });
    try {
      await views.define('things', []);
      const target = await views.beginRebuild('things');
      await target.commit([doc('r', 7, 'rebuilt')], pos(7));
      await target.activate();
      expect(await reopened(path)).toEqual({ checkpoint: pos(7), docs: [doc('r', 7, 'rebuilt')] });
    } finally {
      await views.close();
    }
  });

  it('takes over a generation another process rebuilt with the sorted indexes its queries had built, before serving it, keeping the documents it rewrote alike', async () => {
    const path = `${dir.path}/takeover`;
    const serving = new MingoViewStore(path);
    const cli = new MingoViewStore(path, {}, undefined, true);
    type Sorted = Map<string, { built: boolean }>;
    const sortedOf = () =>
      (serving as unknown as { active: Map<string, { index: { sorted: Sorted } }> }).active.get('things')!.index.sorted;
    try {
      const indexes: IndexSpec[] = [{ keys: { price: 1 } }, { keys: { title: 1 } }];
      await serving.define('things', indexes);
      // Enough documents that a sorted page is read from the index.
      const many = (title: string) => Array.from({ length: 2000 }, (_, i) => ({ ...doc(`d${i}`, i + 1, title), price: i }));
      await serving.writer('things').commit(many('old'), pos(2000));
      expect(await serving.find('things', {}, { sort: { price: -1 }, limit: 2 })).toHaveLength(2);
      const before = sortedOf();
      expect(before.get('price')!.built).toBe(true);

      const unchanged = await serving.findById('things', 'd5');

      await cli.define('things', indexes);
      const target = await cli.beginRebuild('things');
      // Half the documents written again alike, half changed, one new.
      const rebuilt = [...many('old').slice(0, 1000), ...many('new').slice(1000), { ...doc('top', 2001, 'new'), price: 9999 }];
      await target.commit(rebuilt, pos(2001));
      const switched = new Promise<void>((resolve) => serving.onGenerationSwitch(() => resolve()));
      await target.activate();
      await switched;

      const after = sortedOf();
      expect(after).not.toBe(before);
      // Built while the old generation served: the first sorted query finds it ready.
      expect(after.get('price')!.built).toBe(true);
      expect(after.get('title')!.built).toBe(false);
      expect(
        (await serving.find<{ price: number } & ViewDocument>('things', {}, { sort: { price: -1 }, limit: 2 })).map((d) => d.price),
      ).toEqual([9999, 1999]);
      // A document written again alike is the one already held (not a second copy); a changed one is the new one.
      expect(await serving.findById('things', 'd5')).toBe(unchanged);
      expect((await serving.findById<ReturnType<typeof doc>>('things', 'd1500'))?.title).toBe('new');
      expect(await serving.find('things', {}, { sort: { _id: 1 } })).toEqual(rebuilt.sort((a, b) => (a._id < b._id ? -1 : 1)));
    } finally {
      await cli.close();
      await serving.close();
    }
  });

  it('closes, with nothing of a generation it was taking over left open', async () => {
    const path = `${dir.path}/closing-takeover`;
    const serving = new MingoViewStore(path);
    const cli = new MingoViewStore(path, {}, undefined, true);
    const openFiles = () =>
      readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return '';
          }
        })
        .filter((file) => file.startsWith(path));
    try {
      const indexes: IndexSpec[] = [{ keys: { price: 1 } }];
      await serving.define('things', indexes);
      const many = (at: number) => Array.from({ length: 20_000 }, (_, i) => ({ ...doc(`d${i}`, at, 'thing'), price: i % 97 }));
      await serving.writer('things').commit(many(1), pos(1));
      await serving.find('things', {}, { sort: { price: 1 }, limit: 1 });
      await cli.define('things', indexes);
      const target = await cli.beginRebuild('things');
      await target.commit(many(2), pos(2));
      await target.activate();
      await cli.close();
      const loading = (serving as unknown as { loading: Map<string, unknown> }).loading;
      while (loading.size === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    } finally {
      await serving.close();
    }
    expect(openFiles()).toEqual([]);
  });

  it('reports through ping (the health check) when saves keep failing, and recovers when one succeeds', async () => {
    const path = `${dir.path}/failing`;
    // Reported after a minute of failing saves: the test moves the health check's time past it.
    const views = new MingoViewStore(path, { documentsMs: 10, checkpointMs: 10, failingReportMs: 60_000 });
    try {
      await views.define('things', []);
      const generation = (views as unknown as { active: Map<string, { save: () => void; saveFailing: unknown }> }).active.get('things')!;
      const save = generation.save.bind(generation);
      let diskFull = true;
      generation.save = () => {
        if (diskFull) throw new Error('database or disk is full');
        save();
      };
      await views.writer('things').commit([doc('a', 1, 'first')], pos(1));
      while (!generation.saveFailing) await new Promise((resolve) => setTimeout(resolve, 5));
      // Failing, but not for long yet: healthy; reads are served meanwhile.
      await expect(views.ping()).resolves.toBeUndefined();
      expect((await views.findById<ReturnType<typeof doc>>('things', 'a'))?.title).toBe('first');
      await expect(pingLater(views, 60_000)).rejects.toThrow(
        /^view things not saved to its file for \d+ s \(database or disk is full\): reads are served from memory/,
      );
      diskFull = false;
      while (generation.saveFailing) await new Promise((resolve) => setTimeout(resolve, 5));
      await expect(views.ping()).resolves.toBeUndefined();
      expect(await reopened(path)).toEqual({ checkpoint: pos(1), docs: [doc('a', 1, 'first')] });
    } finally {
      await views.close();
    }
  });

  it('keeps the generations a rebuild already activated when a later one fails, and drops the rest', async () => {
    const path = `${dir.path}/rebuild-failing`;
    const views = new MingoViewStore(path);
    const events = new SqliteEventStore(`${path}/events.sqlite`);
    try {
      const project = (name: string) =>
        defineProjection<ViewDocument & { n: number }>({
          name,
          handles: ['Counted'],
          indexes: [],
          documentIds: () => ['total'],
          evolve: (view, _event, id) => ({ _id: id, _pos: view?._pos ?? pos(0), n: (view?.n ?? 0) + 1 }),
        });
      const [first, second] = [project('first_count'), project('second_count')];
      await Promise.all([views.define(first.name, []), views.define(second.name, [])]);
      await appendToStream(
        events,
        'c-1',
        [{ id: randomUUID(), type: 'Counted', data: {}, metadata: { actor: 'test', occurredAt: new Date(0).toISOString() } }],
        'no_stream',
      );
      const begin = views.beginRebuild.bind(views);
      jest.spyOn(views, 'beginRebuild').mockImplementation(async (collection) => {
        const target = await begin(collection);
        return collection === second.name
          ? {
              ...target,
              activate: async () => {
                throw new Error('disk full');
              },
            }
          : target;
      });
      await expect(rebuildProjections(events, views, [first, second])).rejects.toThrow('disk full');
      // The first switched and stays readable; the second kept its old (empty) generation.
      expect(await views.findById(first.name, 'total')).toMatchObject({ n: 1 });
      expect(await views.findById(second.name, 'total')).toBeNull();
      expect(await reopened(path, first.name)).toMatchObject({ docs: [{ _id: 'total', n: 1 }] });
    } finally {
      await events.close();
      await views.close();
    }
  });
});

/**
 * The embedded views' files are checkpointed by a thread of their own (WalCheckpointer), so that a
 * save on the event loop never copies the WAL into the file and syncs it in the middle of a commit.
 */
describe('embedded view store: WAL checkpoints off the event loop', () => {
  const dir = tempDir('views-checkpoint');
  afterAll(() => dir.remove());
  const pos = (n: number) => String(n).padStart(20, '0');
  const padding = 'x'.repeat(1000);
  /** Until `until` holds, or a ceiling that means hung (the caller's assertion then fails). */
  const settle = async (until: () => boolean, ms = 20_000) => {
    for (const end = Date.now() + ms; !until() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  };
  const connectionOf = (views: MingoViewStore) =>
    (views as unknown as { active: Map<string, { db: Database.Database }> }).active.get('things')!.db;

  /** A store on `name` with a checkpointer of its own (every 50 ms), both closed after `body`. */
  async function withStore(name: string, body: (views: MingoViewStore, checkpointer: WalCheckpointer, path: string) => Promise<void>) {
    const checkpointer = new WalCheckpointer({ intervalMs: 50 });
    const path = `${dir.path}/${name}`;
    const views = new MingoViewStore(path, { documentsMs: 10, checkpointMs: 10 }, checkpointer);
    try {
      await body(views, checkpointer, path);
    } finally {
      await views.close();
      await checkpointer.close();
    }
  }

  /** The database file itself grows only when the WAL's pages are copied into it (by a checkpoint). */
  async function expectCheckpointed(db: Database.Database) {
    await settle(() => statSync(db.name).size > 2_000_000);
    expect(statSync(db.name).size).toBeGreaterThan(2_000_000);
  }

  async function writeMany(views: MingoViewStore, count: number) {
    await views.define('things', []);
    const writer = views.writer('things');
    for (let i = 0; i < count; i += 500) {
      await writer.commit(
        Array.from({ length: 500 }, (_, k) => ({ _id: `doc-${i + k}`, _pos: pos(i + k + 1), padding })),
        pos(i + 500),
      );
    }
  }

  it('turns the saving connection’s own checkpoints off and checkpoints its file from the thread', () =>
    withStore('threaded', async (views) => {
      // ~3 MB of documents: past SQLite's own threshold (1,000 pages), which would checkpoint in a save.
      await writeMany(views, 3000);
      const db = connectionOf(views);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      await expectCheckpointed(db);
    }));

  it('keeps checkpointing a file that two stores watch when one of them closes', () =>
    withStore('shared', async (first, checkpointer, path) => {
      await first.define('things', []);
      const second = new MingoViewStore(path, {}, checkpointer);
      await second.define('things', []);
      await second.close();
      await writeMany(first, 3000);
      await expectCheckpointed(connectionOf(first));
    }));

  it('hands a file it cannot open back to its writer, and never creates one', async () => {
    const checkpointer = new WalCheckpointer({ intervalMs: 50 });
    try {
      const missing = `${dir.path}/gone/things@g1.sqlite`;
      let handedBack = false;
      expect(checkpointer.watch(missing, () => (handedBack = true))).not.toBeNull();
      await settle(() => handedBack);
      expect(handedBack).toBe(true);
      expect(existsSync(missing)).toBe(false);
    } finally {
      await checkpointer.close();
    }
  });

  it('removes the files of a generation a rebuild replaced, once the thread has let go of them', () =>
    withStore('replaced', async (views, checkpointer, path) => {
      await views.define('things', []);
      await views.writer('things').commit([{ _id: 'a', _pos: pos(1) }], pos(1));
      const old = readdirSync(path).filter((name) => name.startsWith('things@'));
      expect(old.length).toBeGreaterThan(0);
      const rebuild = await views.beginRebuild('things');
      await rebuild.commit([{ _id: 'a', _pos: pos(1) }], pos(1));
      await rebuild.activate();
      await checkpointer.settled();
      const left = () => readdirSync(path).filter((name) => name.startsWith('things@'));
      await settle(() => left().every((name) => !old.includes(name)));
      expect(left().filter((name) => old.includes(name))).toEqual([]);
      expect(left().some((name) => name.endsWith('.sqlite'))).toBe(true);
    }));

  it('leaves no file behind for rebuilds abandoned at once', () =>
    withStore('abandoned', async (views, _, path) => {
      await views.define('things', []);
      const before = readdirSync(path).sort();
      for (let i = 0; i < 20; i++) await (await views.beginRebuild('things')).abandon();
      // Removed once the checkpointer's thread has let go of them.
      const same = (names: string[]) => names.length === before.length && names.every((name, i) => name === before[i]);
      expect(await eventually(async () => readdirSync(path).sort(), same)).toEqual(before);
    }));

  it('has the thread’s connections closed once the store is, so its folder may be removed', () =>
    withStore('closing', async (views, _, path) => {
      for (let i = 0; i < 20; i++) {
        await views.define(`things${i}`, []);
        await views.writer(`things${i}`).commit([{ _id: 'a', _pos: pos(1) }], pos(1));
      }
      await views.close();
      // The last connection to close removes a file's WAL: none is left open on the thread.
      expect(readdirSync(path).filter((f) => f.endsWith('-wal') || f.endsWith('-shm'))).toEqual([]);
    }));

  it('never keeps the process alive: its thread holds no reference once a store has closed', async () => {
    const ports = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
    const before = ports();
    await withStore('alive', async (views) => {
      await views.define('things', []);
      await views.close();
      expect(ports()).toBe(before);
    });
  });

  it('ends its thread soon once no file is watched (a process whose stores closed keeps none), and starts another for the next', async () => {
    const checkpointer = new WalCheckpointer({ intervalMs: 50 });
    const thread = () => (checkpointer as unknown as { worker: Worker | null }).worker;
    const file = `${dir.path}/watched.sqlite`;
    new Database(file).close();
    try {
      const unwatch = checkpointer.watch(file, () => undefined)!;
      const first = thread()!;
      const exited = new Promise((resolve) => first.once('exit', resolve));
      unwatch();
      await exited;
      expect(thread()).toBeNull();
      let handedBack = false;
      expect(checkpointer.watch(file, () => (handedBack = true))).not.toBeNull();
      expect(thread()).not.toBeNull();
      expect(thread()).not.toBe(first);
      await checkpointer.settled();
      expect(handedBack).toBe(false);
    } finally {
      await checkpointer.close();
    }
  });

  it('checkpoints in its saves again when that thread fails, and opens later files that way', async () => {
    const checkpointer = new WalCheckpointer({ intervalMs: 60_000 });
    const views = new MingoViewStore(`${dir.path}/failing`, { documentsMs: 10, checkpointMs: 10 }, checkpointer);
    try {
      await views.define('things', []);
      const db = connectionOf(views);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      await (checkpointer as unknown as { worker: Worker }).worker.terminate();
      await settle(() => db.pragma('wal_autocheckpoint', { simple: true }) !== 0);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      await writeMany(views, 3000);
      await expectCheckpointed(db);
      expect(checkpointer.watch(`${dir.path}/elsewhere.sqlite`, () => undefined)).toBeNull();
    } finally {
      await views.close();
    }
  });
});

/**
 * Memory must hold what a restart would load from the file. A projection's document that JSON gives
 * back unchanged is kept as it is, frozen (no copy); any other is kept as its JSON gives it back.
 */
describe('embedded view store: the documents it keeps in memory', () => {
  const pos = (n: number) => String(n).padStart(20, '0');

  it('keeps a JSON-safe document itself, frozen, and loads an equal one after a restart', async () => {
    const dir = tempDir('views-own-docs');
    const views = new MingoViewStore(dir.path);
    try {
      await views.define('things', []);
      const thing = { _id: 'a', _pos: pos(1), tags: ['x', 'y'], price: { cents: 1299 } };
      await views.writer('things').commit([thing], pos(1));
      const kept = await views.findById('things', 'a');
      expect(kept).toBe(thing);
      expect(Object.isFrozen(thing) && Object.isFrozen(thing.tags) && Object.isFrozen(thing.price)).toBe(true);
    } finally {
      await views.close();
    }
    const again = new MingoViewStore(dir.path);
    try {
      await again.define('things', []);
      expect(await again.findById('things', 'a')).toEqual({ _id: 'a', _pos: pos(1), tags: ['x', 'y'], price: { cents: 1299 } });
    } finally {
      await again.close();
      dir.remove();
    }
  });

  it('keeps what JSON makes of any other document, frozen, and leaves the projection its own unfrozen', async () => {
    const dir = tempDir('views-json-docs');
    const views = new MingoViewStore(dir.path);
    try {
      await views.define('things', []);
      const odd = { _id: 'b', _pos: pos(1), at: new Date(Date.UTC(2026, 0, 1)), gone: undefined };
      await views.writer('things').commit([odd], pos(1));
      const kept = await views.findById('things', 'b');
      expect(kept).toEqual({ _id: 'b', _pos: pos(1), at: '2026-01-01T00:00:00.000Z' });
      expect(Object.isFrozen(kept)).toBe(true);
      expect(Object.isFrozen(odd)).toBe(false);
      // The same answer as after a restart: the member JSON drops does not exist.
      expect(await views.count('things', { gone: { $exists: true } })).toBe(0);
    } finally {
      await views.close();
      dir.remove();
    }
  });
});

/** The CLI's store loads a collection only when a command uses it; `status` reads the files. */
describe('embedded view store: collections loaded on first use', () => {
  const dir = tempDir('views-lazy');
  afterAll(() => dir.remove());
  const pos = (n: number) => String(n).padStart(20, '0');

  it('reports status from the files without loading, then loads a collection when it is read or written', async () => {
    const live = new MingoViewStore(dir.path);
    await live.define('things', [{ keys: { kind: 1 } }]);
    await live.define('others', []);
    await live.writer('things').commit(
      [
        { _id: 'a', _pos: pos(1), kind: 'x' },
        { _id: 'b', _pos: pos(2), kind: 'y' },
      ],
      pos(3),
    );
    await live.close();

    const lazy = new MingoViewStore(dir.path, {}, undefined, true);
    try {
      await lazy.define('things', [{ keys: { kind: 1 } }]);
      await lazy.define('others', []);
      await lazy.define('never_written', []);
      const status = await lazy.status();
      expect(status.map(({ collection, checkpoint, documents }) => ({ collection, checkpoint, documents }))).toEqual([
        { collection: 'things', checkpoint: pos(3), documents: 2 },
        { collection: 'others', checkpoint: null, documents: 0 },
        { collection: 'never_written', checkpoint: null, documents: 0 },
      ]);
      // Nothing was loaded (no file of a never-written collection was made either).
      expect(readdirSync(dir.path).some((name) => name.startsWith('never_written@'))).toBe(false);
      expect(await lazy.find('things', { kind: 'y' })).toEqual([{ _id: 'b', _pos: pos(2), kind: 'y' }]);
      await lazy.writer('others').commit([{ _id: 'c', _pos: pos(4) }], pos(4));
      const after = await lazy.status();
      expect(after.find((s) => s.collection === 'others')).toMatchObject({ checkpoint: pos(4), documents: 1 });
      expect(after.find((s) => s.collection === 'things')).toMatchObject({ checkpoint: pos(3), documents: 2 });
    } finally {
      await lazy.close();
    }
  });
});

describe('embedded view store: collections on disk', () => {
  const dir = tempDir('views-on-disk');
  afterAll(() => dir.remove());
  const pos = (n: number) => String(n).padStart(20, '0');
  const open = (name: string) => new MingoViewStore(`${dir.path}/${name}`, {}, undefined, false, 'as-defined');

  it('holds commits pending, seen at once by reads and queries, and writes them with their checkpoint within its delay', async () => {
    const path = `${dir.path}/pending`;
    const onFile = () => {
      const file = readdirSync(path).find((name) => /^purchases@.*\.sqlite$/.test(name))!;
      const db = new Database(`${path}/${file}`, { readonly: true });
      try {
        const checkpoint = db.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get() ?? null;
        return { checkpoint, docs: db.prepare('SELECT count(*) FROM docs').pluck().get() };
      } finally {
        db.close();
      }
    };
    const views = new MingoViewStore(path, { documentsMs: 60_000, checkpointMs: 60_000 }, undefined, false, 'as-defined');
    try {
      await views.define('purchases', [{ keys: { userId: 1 } }]);
      await views.writer('purchases').commit([{ _id: 'a', _pos: pos(1), userId: 'u' }], pos(1));
      await views.writer('purchases').commit([{ _id: 'a', _pos: pos(2), userId: 'v' }], pos(2));
      expect(onFile()).toEqual({ checkpoint: null, docs: 0 });
      expect(await views.findById('purchases', 'a')).toMatchObject({ userId: 'v' });
      // A query reads the keys table: what is pending is written first, its old key dropped.
      expect(await views.find('purchases', { userId: 'v' })).toHaveLength(1);
      expect(await views.find('purchases', { userId: 'u' })).toHaveLength(0);
      expect(onFile()).toEqual({ checkpoint: pos(2), docs: 1 });
      await views.writer('purchases').commit([{ _id: 'b', _pos: pos(3), userId: 'u' }], pos(3));
      await views.close();
      expect(onFile()).toEqual({ checkpoint: pos(3), docs: 2 });
    } finally {
      await views.close();
    }
  });

  it('keeps serving reads when its file is locked by another process, fails queries, reports it through ping, and writes once it is free', async () => {
    const path = `${dir.path}/locked`;
    const views = new MingoViewStore(path, { documentsMs: 10, checkpointMs: 10, failingReportMs: 60_000 }, undefined, false, 'as-defined');
    const file = () => `${path}/${readdirSync(path).find((name) => /^purchases@.*\.sqlite$/.test(name))!}`;
    const generation = () => (views as unknown as { active: Map<string, { saveFailing: unknown }> }).active.get('purchases')!;
    try {
      await views.define('purchases', [{ keys: { userId: 1 } }]);
      await views.writer('purchases').commit([{ _id: 'a', _pos: pos(1), userId: 'u' }], pos(1));
      // Another process holds the file's write lock (a long transaction): the thread's write waits, then fails.
      const other = new Database(file());
      other.exec('BEGIN IMMEDIATE');
      await views.writer('purchases').commit([{ _id: 'b', _pos: pos(2), userId: 'u' }], pos(2));
      while (!generation().saveFailing) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await views.findById('purchases', 'b')).toMatchObject({ userId: 'u' });
      // A query must read the keys table with every commit in it: it fails rather than answer without one.
      await expect(views.find('purchases', { userId: 'u' })).rejects.toThrow(/locked|busy/);
      // Failing, but not for long yet: healthy. A minute on, reported.
      await expect(views.ping()).resolves.toBeUndefined();
      await expect(pingLater(views, 60_000)).rejects.toThrow(/^view purchases not saved to its file for \d+ s \(database is locked\)/);
      other.exec('COMMIT');
      other.close();
      while (generation().saveFailing) await new Promise((resolve) => setTimeout(resolve, 20));
      await expect(views.ping()).resolves.toBeUndefined();
      expect((await views.find('purchases', { userId: 'u' }, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(['a', 'b']);
    } finally {
      await views.close();
    }
    const again = open('locked');
    try {
      await again.define('purchases', [{ keys: { userId: 1 } }]);
      expect(await again.count('purchases', { userId: 'u' })).toBe(2);
      expect(await again.writer('purchases').checkpoint()).toBe(pos(2));
    } finally {
      await again.close();
    }
  });

  it('writes again what its write thread held when the thread stopped, on a new one', async () => {
    const path = `${dir.path}/thread-lost`;
    mkdirSync(path, { recursive: true });
    const thread = new ViewWriteThread();
    const db = new Database(`${path}/purchases.sqlite`);
    db.pragma('journal_mode = WAL');
    const generation = new DiskGeneration('purchases', 'g', db, ['userId'], false, 5, thread);
    const worker = () => (thread as unknown as { worker: Worker | null }).worker;
    try {
      generation.commit([{ _id: 'a', _pos: pos(1), userId: 'u' } as ViewDocument], pos(1));
      generation.write();
      const first = worker()!;
      // A write under way when its thread stops: failed, pending again, written by the next thread.
      // The thread is stopped from outside (as by a crash) as soon as the write is handed to it, with
      // the write's message kept from it: it is then surely outside any statement (one stopped inside
      // a statement that fails takes the whole process down), and the write cannot be done before.
      const port = (thread as unknown as { port: MessagePort }).port;
      const handOver = thread.write.bind(thread);
      let stopped: Promise<number> | null = null;
      thread.write = (...args: Parameters<typeof handOver>) => {
        const post = port.postMessage;
        port.postMessage = () => undefined;
        const seq = handOver(...args);
        port.postMessage = post;
        thread.write = handOver;
        stopped = first.terminate();
        return seq;
      };
      generation.commit([{ _id: 'b', _pos: pos(2), userId: 'v' } as ViewDocument], pos(2));
      while (!stopped) await new Promise((resolve) => setTimeout(resolve, 1));
      await stopped;
      // Until the write is done again on a new thread: none yet (the lost one's failure comes before
      // the retry starts another), or the retry still in flight or pending.
      const state = generation as unknown as { inFlight: unknown; pending: Map<string, unknown> };
      while (worker() === first || worker() === null || state.inFlight || state.pending.size > 0 || generation.saveFailing)
        await new Promise((resolve) => setTimeout(resolve, 5));
      expect(worker()).not.toBeNull();
      const onFile = new Database(`${path}/purchases.sqlite`, { readonly: true });
      try {
        expect(onFile.prepare('SELECT id FROM docs ORDER BY id').pluck().all()).toEqual(['a', 'b']);
        expect(onFile.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get()).toBe(pos(2));
        expect(onFile.prepare('SELECT id FROM keys WHERE field = ? AND value = ?').pluck().all('userId', 'v')).toEqual(['b']);
      } finally {
        onFile.close();
      }
    } finally {
      generation.close();
    }
  });

  it('ends its write thread soon once every file it wrote is released (a process whose views closed keeps none)', async () => {
    const path = `${dir.path}/thread-released`;
    mkdirSync(path, { recursive: true });
    const thread = new ViewWriteThread();
    const worker = () => (thread as unknown as { worker: Worker | null }).worker;
    const open = (name: string) => {
      const db = new Database(`${path}/${name}.sqlite`);
      db.pragma('journal_mode = WAL');
      return new DiskGeneration(name, 'g', db, ['userId'], false, 5, thread);
    };
    const purchases = open('purchases');
    const users = open('users');
    purchases.commit([{ _id: 'a', _pos: pos(1), userId: 'u' } as ViewDocument], pos(1));
    purchases.write();
    users.commit([{ _id: 'u', _pos: pos(1), userId: 'u' } as ViewDocument], pos(1));
    users.write();
    const running = worker()!;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    purchases.close();
    users.close();
    await exited;
    expect(worker()).toBeNull();
  });

  it('keeps what it could not send pending, and never saves a later checkpoint without it', async () => {
    const path = `${dir.path}/thread-unavailable`;
    mkdirSync(path, { recursive: true });
    const thread = new ViewWriteThread();
    const starting = thread as unknown as { start: () => unknown };
    const start = starting.start.bind(thread);
    starting.start = () => {
      throw new Error('no thread can be made');
    };
    const db = new Database(`${path}/purchases.sqlite`);
    db.pragma('journal_mode = WAL');
    const generation = new DiskGeneration('purchases', 'g', db, ['userId'], false, 5, thread);
    try {
      generation.commit([{ _id: 'x', _pos: pos(1), userId: 'u' } as ViewDocument], pos(1));
      expect(() => generation.write()).toThrow('no thread can be made');
      while (!generation.saveFailing) await new Promise((resolve) => setTimeout(resolve, 5));
      generation.commit([{ _id: 'y', _pos: pos(2), userId: 'u' } as ViewDocument], pos(2));
      starting.start = start;
      generation.write();
      const onFile = new Database(`${path}/purchases.sqlite`, { readonly: true });
      try {
        expect(onFile.prepare('SELECT id FROM docs ORDER BY id').pluck().all()).toEqual(['x', 'y']);
        expect(onFile.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get()).toBe(pos(2));
      } finally {
        onFile.close();
      }
      expect(generation.saveFailing).toBeNull();
    } finally {
      generation.close();
    }
  });

  it('finds a document another store on its folder wrote after it looked for it in vain', async () => {
    const writer = open('two-stores');
    const reader = open('two-stores');
    try {
      await writer.define('purchases', [{ keys: { userId: 1 } }]);
      await reader.define('purchases', [{ keys: { userId: 1 } }]);
      expect(await reader.findById('purchases', 'x')).toBeNull();
      await writer.writer('purchases').commit([{ _id: 'x', _pos: pos(1), userId: 'u' }], pos(1));
      expect(await writer.count('purchases', { userId: 'u' })).toBe(1);
      expect(await reader.find('purchases', { userId: 'u' }, { sort: { _id: 1 }, limit: 5 })).toEqual([
        { _id: 'x', _pos: pos(1), userId: 'u' },
      ]);
      expect(await reader.findById('purchases', 'x')).toMatchObject({ userId: 'u' });
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it('tells strings that read as numbers from each other and from numbers, in counts as in finds', async () => {
    const views = open('numeric-text');
    try {
      await views.define('purchases', [{ keys: { userId: 1 } }]);
      const ids = ['7', '007', '7.0', '7e0'];
      await views
        .writer('purchases')
        .commit([...ids.map((userId, i) => ({ _id: `p${i}`, _pos: pos(i + 1), userId })), { _id: 'n', _pos: pos(9), userId: 7 }], pos(9));
      for (const userId of [...ids, 7]) {
        expect(await views.count('purchases', { userId })).toBe(1);
        expect(await views.count('purchases', { userId: { $in: [userId] } })).toBe(1);
        expect(await views.find('purchases', { userId })).toHaveLength(1);
      }
      expect(await views.count('purchases', { userId: { $gte: 7 } })).toBe(1);
    } finally {
      await views.close();
    }
  });

  it('pages sorted queries as the in-memory store does, whatever the sort values hold', async () => {
    const memory = new MingoViewStore(`${dir.path}/paged-memory`);
    const disk = open('paged-disk');
    const values = [3, 1.5, -2, 'b', 'a', 'é', '10', true, false, null, undefined, ['x'], [2, 9], { at: 1 }, 0];
    try {
      const docs = Array.from({ length: 60 }, (_, i) => {
        const doc: Record<string, unknown> = {
          _id: `d${String(i).padStart(2, '0')}`,
          _pos: pos(i + 1),
          userId: i % 3 ? 'u' : 'v',
          group: i % 2,
        };
        const at = values[(i * 7) % values.length];
        if (at !== undefined) doc.createdAt = at;
        doc.rank = i % 4;
        return doc;
      }) as unknown as ViewDocument[];
      for (const views of [memory, disk]) {
        await views.define('purchases', [{ keys: { userId: 1 } }, { keys: { group: 1 } }, { keys: { createdAt: 1 } }]);
        await views.writer('purchases').commit(docs, pos(60));
      }
      // Scalars only (the page is decided in SQL), then with arrays and objects among them (mingo decides).
      const filters = [
        { userId: 'u', createdAt: { $in: [3, 1.5, -2, 'b', 'a', 'é', '10', true, false, 0] } },
        { userId: 'u' },
        { userId: 'v', group: 0 },
      ];
      const sorts: SortSpec[] = [{ createdAt: -1, _id: 1 }, { createdAt: 1 }, { rank: 1, createdAt: -1 }, { _id: -1 }];
      for (const filter of filters)
        for (const sort of sorts)
          for (const [skip, limit] of [
            [0, 5],
            [3, 4],
            [0, 100],
            [38, 10],
          ]) {
            const ids = async (views: MingoViewStore) => (await views.find('purchases', filter, { sort, skip, limit })).map((d) => d._id);
            expect(await ids(disk)).toEqual(await ids(memory));
            expect(await disk.count('purchases', filter)).toBe(await memory.count('purchases', filter));
          }
    } finally {
      await memory.close();
      await disk.close();
    }
  });

  it('keys a file written while its collection lived in memory (an older release) when it opens it on disk', async () => {
    const path = `${dir.path}/from-memory`;
    const before = new MingoViewStore(path);
    await before.define('purchases', [{ keys: { userId: 1 } }]);
    const docs = Array.from({ length: 2500 }, (_, i) => ({ _id: `p${i}`, _pos: pos(i + 1), userId: `u${i % 10}` }));
    await before.writer('purchases').commit(docs, pos(2500));
    await before.close();
    const views = new MingoViewStore(path, {}, undefined, false, 'as-defined');
    try {
      await views.define('purchases', [{ keys: { userId: 1 } }]);
      expect(await views.count('purchases', { userId: 'u3' })).toBe(250);
      expect((await views.find('purchases', { userId: 'u3' }, { sort: { _id: 1 }, limit: 2 })).map((d) => d._id)).toEqual([
        'p1003',
        'p1013',
      ]);
      expect(await views.writer('purchases').checkpoint()).toBe(pos(2500));
    } finally {
      await views.close();
    }
  });

  it('pages a sort on strings holding lone surrogates as the in-memory store does', async () => {
    const memory = new MingoViewStore(`${dir.path}/surrogates-memory`);
    const disk = open('surrogates-disk');
    try {
      const docs = [
        { _id: 'a', _pos: pos(1), userId: 'u', name: '\ud800' },
        { _id: 'b', _pos: pos(2), userId: 'u', name: '\ue000' },
        { _id: 'c', _pos: pos(3), userId: 'u', name: '\ufffd' },
      ];
      for (const views of [memory, disk]) {
        await views.define('purchases', [{ keys: { userId: 1 } }]);
        await views.writer('purchases').commit(docs, pos(3));
      }
      const page = async (views: MingoViewStore) =>
        (await views.find('purchases', { userId: 'u' }, { sort: { name: 1 }, limit: 10 })).map((d) => d._id);
      expect(await page(disk)).toEqual(await page(memory));
    } finally {
      await memory.close();
      await disk.close();
    }
  });

  it("keys every document of a rebuilt generation, one whose id is '' too", async () => {
    const views = open('rebuilt-empty-id');
    try {
      await views.define('purchases', [{ keys: { userId: 1 } }]);
      const target = await views.beginRebuild('purchases');
      await target.commit(
        [
          { _id: '', _pos: pos(1), userId: 'u' },
          { _id: 'a', _pos: pos(2), userId: 'u' },
        ],
        pos(2),
      );
      await target.activate();
      expect(await views.count('purchases', { userId: 'u' })).toBe(2);
      expect((await views.find('purchases', { userId: 'u' }, { sort: { _id: 1 }, limit: 5 })).map((d) => d._id)).toEqual(['', 'a']);
    } finally {
      await views.close();
    }
  });

  it('answers an $in of thousands of values of several kinds', async () => {
    const views = open('large-in');
    try {
      await views.define('purchases', [{ keys: { userId: 1 } }]);
      await views.writer('purchases').commit(
        [
          { _id: 'a', _pos: pos(1), userId: 'u1' },
          { _id: 'b', _pos: pos(2), userId: 7 },
          { _id: 'c', _pos: pos(3), userId: 'u2000' },
        ],
        pos(3),
      );
      const values: unknown[] = [...Array.from({ length: 1500 }, (_, i) => `u${i}`), 7, true];
      expect(await views.count('purchases', { userId: { $in: values } })).toBe(2);
      expect((await views.find('purchases', { userId: { $in: values } }, { sort: { _id: 1 }, limit: 5 })).map((d) => d._id)).toEqual([
        'a',
        'b',
      ]);
    } finally {
      await views.close();
    }
  });

  it('counts no document of a commit that failed', async () => {
    const views = open('failed-commit');
    try {
      await views.define('purchases', [{ keys: { userId: 1 } }]);
      expect(await views.count('purchases', {})).toBe(0);
      // A document JSON cannot write stands for any failure inside the commit's transaction (a full disk).
      const batch = [
        { _id: 'a', _pos: pos(1), userId: 'u' },
        { _id: 'b', _pos: pos(2), userId: 'u', amount: BigInt(1) },
      ] as unknown as ViewDocument[];
      for (let attempt = 0; attempt < 2; attempt++) await expect(views.writer('purchases').commit(batch, pos(2))).rejects.toThrow();
      expect(await views.count('purchases', {})).toBe(0);
      expect(await views.find('purchases', {})).toEqual([]);
      expect((await views.status()).find((s) => s.collection === 'purchases')?.documents).toBe(0);
    } finally {
      await views.close();
    }
  });
});
