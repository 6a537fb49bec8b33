import { sealingThreadFor, SqliteEventStore, SqliteSealStore, SqliteSealingThread } from '@deals/adapters';
import { appendToStream, checkpointSigningKey, HistorySealer, ManualClock, NewEvent, verifyHistory } from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

/**
 * The embedded log's sealing thread hashes each event's stored JSON text; the sealer of any other
 * store hashes the JSON text of the values it reads back. Both must seal alike, or a proof built
 * from what the log gives back would never match a seal.
 */
describe('the embedded log’s sealing thread', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const secret = Buffer.from('an installation secret of 32 bytes');
  const { privateKey, publicKey } = checkpointSigningKey(secret);
  let dir: ReturnType<typeof tempDir>;
  let log: SqliteEventStore;
  let threadSeals: SqliteSealStore;
  let loopSeals: SqliteSealStore;
  let thread: SqliteSealingThread;

  /** Data whose JSON text a careless encoder could write differently from JSON.stringify's. */
  const awkward: Array<Record<string, unknown>> = [
    { name: 'Zoë «café» 東京 🎟️', note: 'line\nbreak\ttab "quoted" \\ back', lone: '\ud800' },
    { amounts: [0.1, 1e21, 5e-7, -0, 123456789012345, Number.MAX_SAFE_INTEGER], nothing: null, yes: true },
    { b: 1, a: 2, 10: 'ten', 2: 'two', nested: { z: [{ y: {} }, []] } },
    { html: '<script>&amp;</script>', control: '\u0001\u001f', separator: '\u2028\u2029' },
  ];

  const event = (i: number, data: Record<string, unknown>): NewEvent => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    type: 'Happened',
    data,
    metadata: { occurredAt: clock.now().toISOString(), actor: 'test', requestId: `req-${i}` },
  });

  beforeEach(async () => {
    dir = tempDir('sealing-thread');
    log = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    threadSeals = new SqliteSealStore(join(dir.path, 'seals.sqlite'));
    loopSeals = new SqliteSealStore(join(dir.path, 'seals-of-the-loop.sqlite'));
    thread = sealingThreadFor(log, threadSeals, secret, clock)!;
    for (const [i, data] of awkward.entries()) await appendToStream(log, `stream-${i % 2}`, [event(i, data)], 'any');
  });
  afterEach(async () => {
    await thread.close();
    await Promise.all([threadSeals.close(), loopSeals.close(), log.close()]);
    dir.remove();
  });

  it('is chosen for a SQLite log beside SQLite seals only', () => {
    expect(thread).toBeInstanceOf(SqliteSealingThread);
    expect(sealingThreadFor(new MemoryEventStore(), threadSeals, secret, clock)).toBeNull();
  });

  it('seals exactly as the event loop’s sealer does, and the log verifies', async () => {
    expect(await thread.sealAll()).toBe(1);
    expect(await new HistorySealer(log, loopSeals, clock, privateKey).sealAll()).toBe(1);
    expect(await threadSeals.checkpoints(1, 10)).toEqual(await loopSeals.checkpoints(1, 10));
    expect(await threadSeals.sealsOf(1)).toEqual(await loopSeals.sealsOf(1));
    expect(await verifyHistory(log, threadSeals, publicKey)).toMatchObject({ verified: true, events: awkward.length, unsealed: 0 });

    await appendToStream(log, 'stream-0', [event(99, { after: 'the first checkpoint' })], 'any');
    expect(await thread.sealNext()).toBe(2);
    expect(await thread.sealNext()).toBe(0);
    expect(await verifyHistory(log, threadSeals, publicKey)).toMatchObject({ verified: true, checkpoints: 2, unsealed: 0 });
  });

  it('goes on from another sealer’s checkpoint, and starts again after it was closed', async () => {
    await new HistorySealer(log, threadSeals, clock, privateKey).sealNext();
    await appendToStream(log, 'stream-1', [event(7, { later: true })], 'any');
    expect(await thread.sealNext()).toBe(2);
    await thread.close();
    await appendToStream(log, 'stream-1', [event(8, { later: 'again' })], 'any');
    expect(await thread.sealNext()).toBe(3);
    expect(await verifyHistory(log, threadSeals, publicKey)).toMatchObject({ verified: true, checkpoints: 3, unsealed: 0 });
  });
});
