import { MingoViewStore } from '@deals/adapters';
import { MemoryEventStore, StreamCount, streamCounts, streamFeed } from '@deals/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProjection, Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { rebuildProjections } from './rebuild';
import { ViewDocument, ViewStore } from './ports/view-store.port';
import { eventsHandled, planRebuild } from './rebuild-plan';

const counts = streamCounts;
const feed = streamFeed;

/** Handles an event the log holds once, at its start: its checkpoint still reaches the end of the log. */
const rare = defineProjection<ViewDocument>({
  name: 'rare',
  handles: ['R'],
  indexes: [],
  documentIds: () => ['r'],
  evolve: (_view, event, id) => ({ _id: id, _pos: event.position }),
});

const PROJECTIONS = [counts, feed, rare] as Projection[];
const quiet = { log: () => undefined, error: () => undefined };

describe('rebuildProjections', () => {
  let dir: string;
  let store: MemoryEventStore;
  const opened: ViewStore[] = [];

  async function viewStore(name: string): Promise<ViewStore> {
    const views = new MingoViewStore(join(dir, name));
    opened.push(views);
    for (const p of PROJECTIONS) await views.define(p.name, p.indexes);
    return views;
  }

  async function contents(views: ViewStore) {
    const all: Record<string, { docs: ViewDocument[]; checkpoint: string | null }> = {};
    for (const { name } of PROJECTIONS)
      all[name] = { docs: await views.find(name, {}, { sort: { _id: 1 } }), checkpoint: await views.writer(name).checkpoint() };
    return all;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rebuild-'));
    store = new MemoryEventStore();
    store.elsewhere('rare', { type: 'R', data: {} });
    for (let i = 0; i < 60; i++) {
      const stream = `s-${i % 5}`;
      store.elsewhere(stream, { type: ['A', 'B', 'C', 'D'][i % 4], data: {} });
    }
  });

  afterEach(async () => {
    for (const views of opened.splice(0)) await views.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes what folding the log live makes, pages and kept documents notwithstanding, every checkpoint at the end', async () => {
    const live = await viewStore('live');
    const runners = PROJECTIONS.map((p) => new ProjectionRunner(store, live, p, quiet));
    for (const runner of runners) await runner.start();
    const head = (await store.head())!;
    await Promise.all(runners.map((r) => r.waitFor(head, 20_000)));
    for (const runner of runners) await runner.stop();

    const rebuilt = await viewStore('rebuilt');
    const progress: number[] = [];
    // Pages of 4 events, 2 documents kept a view: most documents are read back from the store.
    const done = await rebuildProjections(store, rebuilt, PROJECTIONS, (p) => progress.push(p.applied), 4, 2);
    expect(await contents(rebuilt)).toEqual(await contents(live));
    expect((await contents(rebuilt)).rare.checkpoint).toBe(head);
    // A, B, C and R events: D, which no view handles, is never read.
    expect(done.applied).toBe(46);
    expect(progress[progress.length - 1]).toBe(46);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('reads only the types the views handle', async () => {
    const views = await viewStore('types');
    const read = jest.spyOn(store, 'readTypes');
    await rebuildProjections(store, views, [counts as Projection, rare], () => undefined, 10);
    expect(read.mock.calls.every(([options]) => [...options.types].sort().join() === 'A,B,R')).toBe(true);
    expect((await views.findById<StreamCount>('counts', 's-0'))?.count).toBe(6);
  });

  it('drops every new generation when the commits fail (the store refuses even a dead letter), the old ones still serving', async () => {
    const views = await viewStore('failing');
    await rebuildProjections(store, views, PROJECTIONS, () => undefined, 100);
    const before = await contents(views);
    let commits = 0;
    const commitAll = views.commitAll.bind(views);
    jest.spyOn(views, 'commitAll').mockImplementation(async (batches) => {
      if (++commits >= 3) throw new Error('disk full');
      return commitAll(batches);
    });
    await expect(rebuildProjections(store, views, PROJECTIONS, () => undefined, 4)).rejects.toThrow('disk full');
    expect(await contents(views)).toEqual(before);
  });
});

describe('planRebuild', () => {
  const view = (name: string, handles: string[]) => ({ ...counts, name, handles }) as Projection;
  const counted = new Map([
    ['Big', 1000],
    ['Mid', 600],
    ['Small', 300],
    ['Tiny', 10],
  ]);

  it('gives each process views of about equal weight, the heaviest first, each reading the events its views handle', () => {
    const views = [
      view('tiny', ['Tiny']),
      view('big', ['Big']),
      view('mid', ['Mid']),
      view('small', ['Small']),
      view('mixed', ['Mid', 'Small']),
    ];
    expect(planRebuild(views, counted, 2)).toEqual([
      { views: ['big', 'small', 'tiny'], events: 1310 },
      { views: ['mixed', 'mid'], events: 900 },
    ]);
    expect(planRebuild(views, counted, 1)).toEqual([{ views: ['big', 'mixed', 'mid', 'small', 'tiny'], events: 1910 }]);
    expect(eventsHandled(views, counted)).toBe(1910);
  });

  it('weighs a view by what the store holds of it when it can tell, and the others by their events at the same bytes an event', () => {
    const views = [view('feed', ['Small']), view('a', ['Big']), view('b', ['Mid']), view('c', ['Tiny'])];
    const bytes = new Map([
      ['feed', 5000],
      ['a', 1000],
      ['b', 1000],
    ]);
    // By its events the feed is light; by what it stores, the heaviest.
    expect(planRebuild(views, counted, 2, bytes)).toEqual([
      { views: ['feed'], events: 300 },
      { views: ['a', 'b', 'c'], events: 1610 },
    ]);
    expect(planRebuild(views, counted, 2)).toEqual([
      { views: ['a'], events: 1000 },
      { views: ['b', 'feed', 'c'], events: 910 },
    ]);
  });

  it('makes no empty part: fewer processes than asked when there are fewer views', () => {
    expect(planRebuild([view('big', ['Big']), view('none', ['Never'])], counted, 4)).toEqual([
      { views: ['big'], events: 1000 },
      { views: ['none'], events: 0 },
    ]);
    expect(() => planRebuild([view('big', ['Big'])], counted, 0)).toThrow('at least 1');
  });
});
