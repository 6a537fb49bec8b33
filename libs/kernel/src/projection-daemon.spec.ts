import { MingoViewStore } from '@deals/adapters';
import { MemoryEventStore, streamCounts, streamFeed } from '@deals/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProjection, Projection } from './projection';
import { ProjectionDaemon } from './projection-daemon';
import { ProjectionRunner } from './projection-runner';
import { ViewBatch, ViewDocument, ViewStore } from './ports/view-store.port';

interface Total extends ViewDocument {
  total: number;
}

const counts = streamCounts;
const feed = streamFeed;

/** Sums the B events' amounts by key. */
const totals = defineProjection<Total>({
  name: 'totals',
  handles: ['B'],
  indexes: [],
  documentIds: (event) => [(event.data as { key: string }).key],
  evolve: (view, event, id) => ({ _id: id, _pos: event.position, total: (view?.total ?? 0) + (event.data as { n: number }).n }),
});

/** Handles an event type the log never holds: its checkpoint moves with no document. */
const idle = defineProjection<ViewDocument>({
  name: 'idle',
  handles: ['Z'],
  indexes: [],
  documentIds: () => ['z'],
  evolve: (_view, event, id) => ({ _id: id, _pos: event.position }),
});

const PROJECTIONS: Projection[] = [counts, totals, feed, idle] as Projection[];

const quiet = { log: () => undefined, error: jest.fn() };

/** Appends `n` events of every kind: A and B on a few streams, C now and then. */
function appendSome(store: MemoryEventStore, n: number, from = 0): void {
  for (let i = from; i < from + n; i++) {
    const stream = `s-${i % 4}`;
    if (i % 3 === 0) store.elsewhere(stream, { type: 'A', data: {} });
    else if (i % 3 === 1) store.elsewhere(stream, { type: 'B', data: { key: `k${i % 2}`, n: i } });
    else store.elsewhere(stream, { type: 'C', data: {} }, { type: 'D', data: {} });
  }
}

/** How long a wait may take before it counts as hung (the views reach a few dozen events in milliseconds). */
const HUNG_MS = 20_000;

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + HUNG_MS; !(await check());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The batches of each `commitAll` of `views` from now on (committed as ever). */
function commitsOf(views: ViewStore): ViewBatch[][] {
  const commits: ViewBatch[][] = [];
  const commitAll = views.commitAll.bind(views);
  jest.spyOn(views, 'commitAll').mockImplementation(async (batches) => {
    commits.push([...batches]);
    return commitAll(batches);
  });
  return commits;
}

/** Every collection's documents (by id) and checkpoint. */
async function contents(views: ViewStore): Promise<Record<string, { docs: ViewDocument[]; checkpoint: string | null }>> {
  const all: Record<string, { docs: ViewDocument[]; checkpoint: string | null }> = {};
  for (const { name } of PROJECTIONS)
    all[name] = { docs: await views.find(name, {}, { sort: { _id: 1 } }), checkpoint: await views.writer(name).checkpoint() };
  return all;
}

describe('ProjectionDaemon', () => {
  let dir: string;
  let store: MemoryEventStore;
  const opened: ViewStore[] = [];

  async function viewStore(name: string): Promise<ViewStore> {
    const views = new MingoViewStore(join(dir, name));
    opened.push(views);
    for (const p of PROJECTIONS) await views.define(p.name, p.indexes);
    return views;
  }

  /** The same log kept by a runner a projection, the reference the daemon must match. */
  async function byRunners(): Promise<Record<string, { docs: ViewDocument[]; checkpoint: string | null }>> {
    const views = await viewStore('runners');
    const runners = PROJECTIONS.map((p) => new ProjectionRunner(store, views, p, quiet));
    for (const runner of runners) await runner.start();
    const head = (await store.head())!;
    await Promise.all(runners.map((r) => r.waitFor(head, HUNG_MS)));
    for (const runner of runners) await runner.stop();
    return contents(views);
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'daemon-'));
    store = new MemoryEventStore();
    store.pageSize = 7;
    quiet.error.mockClear();
  });

  afterEach(async () => {
    for (const views of opened.splice(0)) await views.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the same documents and checkpoints as a runner a projection, history and live, telling of each commit', async () => {
    appendSome(store, 40);
    const views = await viewStore('daemon');
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet);
    const told: ViewDocument[] = [];
    daemon.onCommitted('totals', (documents) => told.push(...documents));
    await daemon.start();
    appendSome(store, 25, 40);
    const head = (await store.head())!;
    expect(await daemon.waitFor('counts', head, HUNG_MS)).toBe(true);
    expect(await daemon.waitFor('idle', head, HUNG_MS)).toBe(true);
    expect(daemon.caughtUpTo('feed')).toBe(head);
    // The listener heard of every document the view holds, at its last position.
    const stored = await views.find<Total>('totals', {});
    for (const doc of stored) expect(told.filter((d) => d._id === doc._id).at(-1)).toEqual(doc);
    await daemon.stop();
    expect(await contents(views)).toEqual(await byRunners());
    expect(quiet.error).not.toHaveBeenCalled();
  });

  it('commits every view of a page in one commitAll, storing only the checkpoints of views that handled events, the others at most every interval', async () => {
    const views = await viewStore('daemon');
    const commits = commitsOf(views);
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet, { idleCheckpointMs: 60_000 });
    await daemon.start();
    store.elsewhere('s-1', { type: 'A', data: {} });
    await until(() => commits.length === 1, 'the first page');
    // The first page stores every checkpoint (none was stored for a while).
    expect(commits[0].map((b) => [b.writer.collection, b.documents.length, b.store])).toEqual([
      ['counts', 1, true],
      ['totals', 0, true],
      ['feed', 0, true],
      ['idle', 0, true],
    ]);
    const first = commits[0][0].checkpoint;
    store.elsewhere('s-2', { type: 'B', data: { key: 'k', n: 1 } });
    await until(() => commits.length === 2, 'the second page');
    expect(commits[1].map((b) => [b.writer.collection, b.documents.length, b.store])).toEqual([
      ['counts', 1, true],
      ['totals', 1, true],
      ['feed', 0, false],
      ['idle', 0, false],
    ]);
    expect(await views.writer('idle').checkpoint()).toBe(first);
    // A page no view handles stores every checkpoint.
    store.elsewhere('s-3', { type: 'D', data: {} });
    await until(() => commits.length === 3, 'the third page');
    expect(commits[2].every((b) => b.store && b.documents.length === 0)).toBe(true);
    const head = (await store.head())!;
    expect(await views.writer('idle').checkpoint()).toBe(head);
    // Stopping stores what a page left behind.
    store.elsewhere('s-2', { type: 'B', data: { key: 'k', n: 2 } });
    await until(() => commits.length === 4, 'the fourth page');
    await daemon.stop();
    expect(await views.writer('feed').checkpoint()).toBe(await store.head());
  });

  it('stores no checkpoint between intervals where the store tells of each one committed, changed documents or not', async () => {
    const views = await viewStore('daemon');
    Object.defineProperty(views, 'tellsOfCheckpoints', { value: true });
    const commits = commitsOf(views);
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet, { idleCheckpointMs: 60_000 });
    await daemon.start();
    store.elsewhere('s-1', { type: 'A', data: {} });
    await until(() => commits.length === 1, 'the first page');
    // The first page stores every checkpoint (none was stored for a while); the next ones none.
    expect(commits[0].every((b) => b.store)).toBe(true);
    store.elsewhere('s-2', { type: 'B', data: { key: 'k', n: 1 } });
    await until(() => commits.length === 2, 'the second page');
    expect(commits[1].map((b) => [b.writer.collection, b.documents.length, b.store])).toEqual([
      ['counts', 1, false],
      ['totals', 1, false],
      ['feed', 0, false],
      ['idle', 0, false],
    ]);
    store.elsewhere('s-3', { type: 'D', data: {} });
    await until(() => commits.length === 3, 'the third page');
    expect(commits[2].some((b) => b.store)).toBe(false);
    // Stopping stores what the pages left behind.
    await daemon.stop();
    for (const name of ['counts', 'totals', 'feed', 'idle']) expect(await views.writer(name).checkpoint()).toBe(await store.head());
  });

  it('stores every checkpoint with each page where the store tells of none and stores them all in one write', async () => {
    const views = await viewStore('daemon');
    Object.defineProperty(views, 'storesCheckpointsTogether', { value: true });
    const commits = commitsOf(views);
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet, { idleCheckpointMs: 60_000 });
    await daemon.start();
    store.elsewhere('s-1', { type: 'A', data: {} });
    await until(() => commits.length === 1, 'the first page');
    store.elsewhere('s-2', { type: 'B', data: { key: 'k', n: 1 } });
    await until(() => commits.length === 2, 'the second page');
    expect(commits[1].map((b) => [b.writer.collection, b.documents.length, b.store])).toEqual([
      ['counts', 1, true],
      ['totals', 1, true],
      ['feed', 0, true],
      ['idle', 0, true],
    ]);
    expect(await views.writer('idle').checkpoint()).toBe(await store.head());
    await daemon.stop();
  });

  it('stores the checkpoints a page left behind a while after it', async () => {
    // An hour: no second page comes within it on any machine, and the test fires the timer itself.
    const idleCheckpointMs = 3_600_000;
    const views = await viewStore('daemon');
    const timers = jest.spyOn(global, 'setTimeout');
    try {
      const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet, { idleCheckpointMs });
      await daemon.start();
      store.elsewhere('s-1', { type: 'A', data: {} });
      await until(async () => (await views.writer('idle').checkpoint()) !== null, 'the first page');
      store.elsewhere('s-1', { type: 'A', data: {} });
      const head = (await store.head())!;
      await until(() => daemon.caughtUpTo('idle') === head, 'the second page');
      expect(await views.writer('idle').checkpoint()).not.toBe(head);
      // The hour passes: the timer the page armed fires.
      const armed = timers.mock.calls.findIndex(([, ms]) => ms === idleCheckpointMs);
      expect(armed).toBeGreaterThanOrEqual(0);
      clearTimeout(timers.mock.results[armed].value as NodeJS.Timeout);
      (timers.mock.calls[armed][0] as () => void)();
      await until(async () => (await views.writer('idle').checkpoint()) === head, 'the idle checkpoint');
      await daemon.stop();
    } finally {
      timers.mockRestore();
    }
  });

  it('retries a page whose commit failed, even when some writers had committed, to the same views', async () => {
    appendSome(store, 30);
    const views = await viewStore('daemon');
    const commitAll = views.commitAll.bind(views);
    let failures = 0;
    jest.spyOn(views, 'commitAll').mockImplementation(async (batches) => {
      if (failures < 2 && batches.length > 1) {
        failures++;
        // The default commits writer by writer: the first commits, then the store fails.
        await commitAll(batches.slice(0, 1));
        throw new Error('the store went away');
      }
      return commitAll(batches);
    });
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet);
    await daemon.start();
    const head = (await store.head())!;
    expect(await daemon.waitFor('totals', head, HUNG_MS)).toBe(true);
    await daemon.stop();
    expect(failures).toBe(2);
    expect(quiet.error).toHaveBeenCalledWith('projections failed; retrying', expect.any(Error));
    expect(await contents(views)).toEqual(await byRunners());
  });

  it('reads a document from the store only the first time it meets it, after a failed page again', async () => {
    const views = await viewStore('daemon');
    const asked: string[] = [];
    const writer = views.writer.bind(views);
    jest.spyOn(views, 'writer').mockImplementation((collection) => {
      const inner = writer(collection);
      const getMany = inner.getMany.bind(inner);
      inner.getMany = (ids) => {
        asked.push(...ids.map((id) => `${collection}/${id}`));
        return getMany(ids);
      };
      return inner;
    });
    const commitAll = views.commitAll.bind(views);
    let fail = false;
    jest.spyOn(views, 'commitAll').mockImplementation(async (batches) => {
      if (fail && batches.some((b) => b.documents.length)) {
        fail = false;
        throw new Error('the store went away');
      }
      return commitAll(batches);
    });
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet);
    await daemon.start();
    for (let n = 0; n < 3; n++) {
      store.elsewhere('s-1', { type: 'B', data: { key: 'k', n } }, { type: 'C', data: {} });
      expect(await daemon.waitFor('totals', (await store.head())!, HUNG_MS)).toBe(true);
    }
    expect(asked.sort()).toEqual(['counts/s-1', 'feed/all', 'totals/k']);
    fail = true;
    store.elsewhere('s-1', { type: 'B', data: { key: 'k', n: 3 } });
    expect(await daemon.waitFor('totals', (await store.head())!, HUNG_MS)).toBe(true);
    await daemon.stop();
    expect(asked.filter((id) => id === 'totals/k')).toHaveLength(2);
    expect(await contents(views)).toEqual(await byRunners());
  });

  it('restarts a projection from its rebuilt generation, the others skipping what they hold', async () => {
    appendSome(store, 30);
    const views = await viewStore('daemon');
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet);
    const countsTold: ViewDocument[] = [];
    daemon.onCommitted('counts', (documents) => countsTold.push(...documents));
    await daemon.start();
    const before = (await store.head())!;
    await daemon.waitFor('counts', before, HUNG_MS);
    await daemon.waitFor('totals', before, HUNG_MS);
    countsTold.length = 0;
    // A rebuild elsewhere activates an empty generation of `totals`: the daemon folds the whole log into it.
    const rebuilt = await views.beginRebuild('totals');
    await rebuilt.activate();
    expect(await views.count('totals', {})).toBe(0);
    appendSome(store, 6, 30);
    const head = (await store.head())!;
    expect(await daemon.waitFor('totals', head, HUNG_MS)).toBe(true);
    expect(await daemon.waitFor('counts', head, HUNG_MS)).toBe(true);
    // `counts` was told only of the new events' documents, each once.
    expect(countsTold.every((doc) => doc._pos > before)).toBe(true);
    await daemon.stop();
    expect(await contents(views)).toEqual(await byRunners());
  });

  it('waits for a position it has not reached, and gives up after the timeout', async () => {
    const views = await viewStore('daemon');
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet);
    await daemon.start();
    expect(await daemon.waitFor('counts', '000000000009', 30)).toBe(false);
    const waiting = daemon.waitFor('idle', '000000000001', HUNG_MS);
    store.elsewhere('s-1', { type: 'A', data: {} });
    expect(await waiting).toBe(true);
    await daemon.stop();
  });

  it('keeps only the projections it is given, and takes one on from its stored checkpoint while running', async () => {
    appendSome(store, 20);
    const views = await viewStore('daemon');
    // Another keeper folded `totals` up to the head of these 20 events and stored its checkpoint.
    const other = new ProjectionDaemon(store, views, PROJECTIONS, quiet, { keep: ['totals'] });
    await other.start();
    expect(await other.waitFor('totals', (await store.head())!, HUNG_MS)).toBe(true);
    await other.stop();
    const stored = await views.writer('totals').checkpoint();
    const froms: Array<string | null> = [];
    const subscribe = store.subscribe.bind(store);
    jest.spyOn(store, 'subscribe').mockImplementation((options) => (froms.push(options.after), subscribe(options)));
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet, { keep: ['counts', 'feed', 'idle'] });
    const adopted: string[] = [];
    daemon.onAdopted('totals', () => adopted.push('totals'));
    await daemon.start();
    expect(daemon.keptNames().sort()).toEqual(['counts', 'feed', 'idle']);
    expect(await daemon.waitFor('totals', (await store.head())!, 50)).toBeNull();
    appendSome(store, 6, 20);
    expect(await daemon.waitFor('counts', (await store.head())!, HUNG_MS)).toBe(true);
    // Not kept: its view stays where the other keeper left it.
    expect(await views.writer('totals').checkpoint()).toBe(stored);
    await daemon.keepOnly(['counts', 'feed', 'idle', 'totals']);
    expect(adopted).toEqual(['totals']);
    // Read again from its stored checkpoint (the others are further on), not from the start of the log.
    expect(froms[froms.length - 1]).toBe(stored);
    appendSome(store, 6, 26);
    const head = (await store.head())!;
    for (const name of ['counts', 'totals', 'feed', 'idle']) expect(await daemon.waitFor(name, head, HUNG_MS)).toBe(true);
    await daemon.stop();
    expect(await contents(views)).toEqual(await byRunners());
  });

  it('drops a projection at once: its waits end with null, its view is no longer written', async () => {
    const views = await viewStore('daemon');
    const daemon = new ProjectionDaemon(store, views, PROJECTIONS, quiet);
    await daemon.start();
    const waiting = daemon.waitFor('totals', '000000000009', HUNG_MS);
    await daemon.keepOnly(['counts', 'feed', 'idle']);
    expect(await waiting).toBeNull();
    expect(daemon.keeps('totals')).toBe(false);
    appendSome(store, 6);
    const head = (await store.head())!;
    expect(await daemon.waitFor('counts', head, HUNG_MS)).toBe(true);
    expect(await views.count('totals', {})).toBe(0);
    expect(await views.writer('totals').checkpoint()).toBeNull();
    // Nothing kept: no subscription, and taking one on again starts it.
    await daemon.keepOnly([]);
    await daemon.keepOnly(['totals']);
    expect(await daemon.waitFor('totals', head, HUNG_MS)).toBe(true);
    expect(await views.count('totals', {})).toBeGreaterThan(0);
    await daemon.stop();
  });
});
