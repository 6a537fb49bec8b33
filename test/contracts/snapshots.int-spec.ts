import { appendToStream, DomainError, EventStore, handleCommand, loadCachedAggregate, NewEvent, SnapshotStore } from '@deals/kernel';
import { PostgresEventStore } from '@deals/adapters/event-store/postgres/postgres-event-store.adapter';
import { SqliteEventStore } from '@deals/adapters/event-store/sqlite/sqlite-event-store.adapter';
import { PostgresSnapshotStore } from '@deals/adapters/snapshot-store/postgres-snapshot-store.adapter';
import { SqliteSnapshotStore } from '@deals/adapters/snapshot-store/sqlite-snapshot-store.adapter';
import {
  Inventory,
  InventoryCommand,
  inventoryDecider,
  inventorySnapshots,
  unitsOf,
} from '@deals/purchasing/domain/inventory/inventory.decider';
import { inventoryStream } from '@deals/purchasing/domain/inventory/inventory.events';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';
import { tempDir } from '../support/temp-dir';

/** A log with its snapshot store beside it, as one process opens them. */
type LogWithSnapshots = EventStore & { snapshots: SnapshotStore | null };

/** A log and its snapshot store as one process opens them; `wipe` deletes every snapshot (the processes stopped). */
interface Backend {
  open(): LogWithSnapshots;
  wipe(): Promise<void>;
}

const DEAL = 'hot';
const STREAM = inventoryStream(DEAL);
const SALES = 6_000;
const t0 = Date.parse('2026-06-15T12:00:00Z');
const context = (at: number) => ({ now: new Date(at), metadata: { actor: 'test' } });

/**
 * A long inventory stream as the service writes it (each event decided by the inventory decider):
 * stocked, then SALES holds each sold to one of five buyers; appended through the port in large
 * appends. Its events' count is 1 + 2 × SALES.
 */
async function writeLongStream(store: EventStore): Promise<void> {
  let state = inventoryDecider.initialState();
  let pending: NewEvent[] = [];
  let revision: number | 'no_stream' = 'no_stream';
  const decide = async (command: InventoryCommand, at: number) => {
    for (const e of inventoryDecider.decide(command, state, new Date(at))) {
      state = inventoryDecider.evolve(state, e);
      pending.push({ id: randomUUID(), type: e.type, data: e.data, metadata: { occurredAt: new Date(at).toISOString() } });
    }
    if (pending.length >= 1000) {
      revision = (await appendToStream(store, STREAM, pending, revision)).nextExpectedRevision;
      pending = [];
    }
  };
  await decide({ type: 'StockUnits', data: { dealId: DEAL, total: 1_000_000 } }, t0);
  for (let i = 0; i < SALES; i++) {
    const at = t0 + i * 10;
    await decide(
      { type: 'HoldUnits', data: { dealId: DEAL, holdId: `h${i}`, quantity: 1, buyer: `p/u${i % 5}`, maxPerBuyer: 1_000_000 } },
      at,
    );
    await decide({ type: 'SellHeldUnits', data: { dealId: DEAL, holdId: `h${i}` } }, at);
  }
  if (pending.length) await appendToStream(store, STREAM, pending, revision);
}

/** Counts the events each `readStream` returns. */
function countReads(store: EventStore): { events: number } {
  const read = { events: 0 };
  const readStream = store.readStream.bind(store);
  jest.spyOn(store, 'readStream').mockImplementation(async (streamId, from) => {
    const events = await readStream(streamId, from);
    if (streamId === STREAM) read.events += events.length;
    return events;
  });
  return read;
}

/** What a command on the hot deal answers: its events' types, or its refusal. */
async function answer(store: EventStore, command: InventoryCommand, at = t0 + SALES * 10 + 1000): Promise<unknown> {
  try {
    return (await handleCommand(store, STREAM, inventoryDecider, command, context(at))).events.map((e) => e.type);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return `${error.constructor.name}: ${error.message}`;
  }
}

/** Commands on holds closed long ago: each answers from the closed holds, and none writes. */
const repeats: InventoryCommand[] = [
  { type: 'SellHeldUnits', data: { dealId: DEAL, holdId: 'h3' } },
  { type: 'SellHeldUnits', data: { dealId: DEAL, holdId: 'h3', buyer: 'p/someone-else' } },
  { type: 'HoldUnits', data: { dealId: DEAL, holdId: 'h17', quantity: 1 } },
  { type: 'ReleaseHold', data: { dealId: DEAL, holdId: 'h1', reason: 'released' } },
  { type: 'HoldUnits', data: { dealId: DEAL, holdId: 'p/u1', quantity: 1, buyer: 'p/u1', maxPerBuyer: 1200 } },
];

function snapshotSuite(name: string, backend: () => Backend) {
  describe(`snapshots of a long stream: ${name}`, () => {
    let b: Backend;
    const open: LogWithSnapshots[] = [];
    const start = () => {
      const store = b.open();
      open.push(store);
      return store;
    };
    beforeAll(async () => {
      b = backend();
      await writeLongStream(start());
    }, 120_000);
    afterAll(async () => {
      for (const store of open) {
        await store.close();
        await store.snapshots?.close();
      }
    });

    it('after a restart, the first command reads only the events after the latest snapshot, not the whole stream', async () => {
      // The first process to fold the stream finds no snapshot: it folds it whole and saves one.
      const first = start();
      const whole = countReads(first);
      expect(await answer(first, { type: 'HoldUnits', data: { dealId: DEAL, holdId: 'fresh-1', quantity: 1 } })).toEqual(['UnitsHeld']);
      expect(whole.events).toBe(1 + 2 * SALES);
      // A restart: a new process, nothing cached.
      const restarted = start();
      const reads = countReads(restarted);
      expect(await answer(restarted, { type: 'SellHeldUnits', data: { dealId: DEAL, holdId: 'fresh-1' } })).toEqual(['UnitsSold']);
      expect(reads.events).toBeLessThanOrEqual(inventorySnapshots.every + 1);
      const { state } = await loadCachedAggregate(restarted, STREAM, inventoryDecider);
      expect(unitsOf(state).sold).toBe(SALES + 1);
    });

    it('keeps saving snapshots as the stream grows, and answers repeated commands on long-closed holds as the fold does', async () => {
      const store = start();
      for (let i = 0; i < 600; i++) {
        const at = t0 + SALES * 10 + 2000 + i;
        await answer(store, { type: 'HoldUnits', data: { dealId: DEAL, holdId: `late${i}`, quantity: 1, buyer: 'p/u9' } }, at);
        await answer(store, { type: 'SellHeldUnits', data: { dealId: DEAL, holdId: `late${i}` } }, at);
      }
      const restarted = start();
      const reads = countReads(restarted);
      const withSnapshots = [];
      for (const command of repeats) withSnapshots.push(await answer(restarted, command));
      expect(reads.events).toBeLessThanOrEqual(inventorySnapshots.every + 1);
      expect(withSnapshots).toEqual([
        [],
        'ValidationFailed: id is already claimed by another user',
        [],
        'ValidationFailed: id is being claimed: its units are sold',
        'OverPerUserLimit: at most 1200 per user; already bought 1200',
      ]);
      // Deleting every snapshot changes no answer: the next process folds the whole stream.
      await b.wipe();
      const folded = start();
      const all = countReads(folded);
      const withoutSnapshots = [];
      for (const command of repeats) withoutSnapshots.push(await answer(folded, command));
      expect(withoutSnapshots).toEqual(withSnapshots);
      expect(all.events).toBeGreaterThan(2 * SALES);
    }, 120_000);

    it("answers a repeat on a closed hold as the fold does when another process's later snapshot lands during its own save", async () => {
      // Snapshots every 10 events, on a stream of its own. P saved one at 9; the hold X is sold at 11;
      // P's next one is due at 19, and while it saves, Q appends and saves one at 20 first (with X).
      const deal = `race-${randomUUID()}`;
      const stream = inventoryStream(deal);
      const decider = { ...inventoryDecider, snapshot: { ...inventorySnapshots, every: 10 } };
      const run = async (store: EventStore, command: InventoryCommand) => {
        try {
          return (await handleCommand(store, stream, decider, command, context(t0))).events.map((e) => e.type);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          return `${error.constructor.name}: ${error.message}`;
        }
      };
      const hold = (holdId: string): InventoryCommand => ({ type: 'HoldUnits', data: { dealId: deal, holdId, quantity: 1 } });
      const sell: InventoryCommand = { type: 'SellHeldUnits', data: { dealId: deal, holdId: 'X' } };
      // The other writes come from a process that keeps no snapshots.
      const writer = start();
      const unused = writer.snapshots!;
      writer.snapshots = null;
      await unused.close();
      const q = start();
      const p = start();
      let during: (() => Promise<unknown>) | null = null;
      const save = p.snapshots!.save.bind(p.snapshots);
      jest.spyOn(p.snapshots!, 'save').mockImplementation(async (...args) => {
        const meanwhile = during;
        during = null;
        await meanwhile?.();
        return save(...args);
      });
      await run(writer, { type: 'StockUnits', data: { dealId: deal, total: 1000 } });
      for (let i = 1; i <= 6; i++) await run(writer, hold(`w${i}`));
      await run(q, hold('q1'));
      await run(writer, hold('w8'));
      await run(p, hold('p1'));
      await run(writer, hold('X'));
      expect(await run(writer, sell)).toEqual(['UnitsSold']);
      for (let i = 12; i <= 19; i++) await run(writer, hold(`w${i}`));
      during = async () => {
        await run(writer, hold('w20'));
        await run(q, hold('q2'));
      };
      expect(await run(p, sell)).toEqual([]);
      expect(during).toBeNull();
      expect(await run(start(), sell)).toEqual([]);
    });

    it('ignores snapshots of another shape', async () => {
      const store = start();
      const reshaped = { ...inventoryDecider, snapshot: { ...inventorySnapshots, shape: 'inventory/next' } };
      const reads = countReads(store);
      const { state } = await loadCachedAggregate<Inventory, never>(store, STREAM, reshaped as never);
      expect(reads.events).toBeGreaterThan(2 * SALES);
      expect(unitsOf(state).sold).toBe(SALES + 601);
    });
  });
}

const dir = tempDir('snapshots');
afterAll(() => dir.remove());
snapshotSuite('SQLite', () => {
  const events = join(dir.path, 'events.sqlite');
  const snapshots = join(dir.path, 'snapshots.sqlite');
  return {
    open: () => Object.assign(new SqliteEventStore(events), { snapshots: new SqliteSnapshotStore(snapshots) }),
    wipe: async () => ['', '-wal', '-shm'].forEach((suffix) => rmSync(snapshots + suffix, { force: true })),
  };
});

describe('a snapshot whose event is not in the log (a log restored from an older copy)', () => {
  it('is forgotten, and the stream folded from the log', async () => {
    const other = tempDir('restored');
    const snapshots = join(other.path, 'snapshots.sqlite');
    const a = Object.assign(new SqliteEventStore(join(other.path, 'a.sqlite')), { snapshots: new SqliteSnapshotStore(snapshots) });
    const b = Object.assign(new SqliteEventStore(join(other.path, 'b.sqlite')), { snapshots: new SqliteSnapshotStore(snapshots) });
    try {
      await writeLongStream(a);
      expect(unitsOf((await loadCachedAggregate(a, STREAM, inventoryDecider)).state).sold).toBe(SALES);
      expect(await a.snapshots.load(STREAM, inventorySnapshots.shape)).not.toBeNull();
      // Another log of the same stream, shorter: the snapshot's event is not in it.
      await appendToStream(
        b,
        STREAM,
        [
          {
            id: randomUUID(),
            type: 'InventoryStocked',
            data: { dealId: DEAL, total: 5 },
            metadata: { occurredAt: new Date(t0).toISOString() },
          },
        ],
        'no_stream',
      );
      const { state } = await loadCachedAggregate(b, STREAM, inventoryDecider, ['h3']);
      const { total, sold, closed } = unitsOf(state);
      expect({ total, sold, closed: closed.get('h3') }).toEqual({ total: 5, sold: 0, closed: undefined });
      expect(await b.snapshots.load(STREAM, inventorySnapshots.shape)).toBeNull();
    } finally {
      for (const s of [a, b]) {
        await s.close();
        await s.snapshots.close();
      }
      other.remove();
    }
  }, 60_000);
});

const unavailable = postgresUnavailableSync();
if (unavailable) {
  describe.skip(`snapshots of a long stream: PostgreSQL — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => (database = await createTestDatabase('snapshots')));
  afterAll(async () => database?.drop());
  snapshotSuite('PostgreSQL', () => ({
    open: () => Object.assign(new PostgresEventStore(database.url), { snapshots: new PostgresSnapshotStore(database.url) }),
    wipe: async () => {
      const client = new Client({ connectionString: database.url });
      await client.connect();
      await client.query('DELETE FROM snapshots; DELETE FROM snapshot_entries');
      await client.end();
    },
  }));
}
