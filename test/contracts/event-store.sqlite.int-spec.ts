import { appendToStream, type RecordedEvent } from '@deals/kernel';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { decodeAppend, decodeAppendReply, encodeAppend } from '@deals/adapters/event-store/sqlite/sqlite-event-log.writes';
import { SqliteEventStore } from '@deals/adapters/event-store/sqlite/sqlite-event-store.adapter';
import { WriteOutcomeUnknown } from '@deals/adapters/sqlite/write-thread';
import { eventStoreContract } from '@deals/testing/contracts/event-store.contract';
import { eventually } from '../support/eventually';
import { tempDir } from '../support/temp-dir';

eventStoreContract('sqlite', async () => {
  const dir = tempDir('events');
  const file = join(dir.path, 'events.sqlite');
  const store = new SqliteEventStore(file);
  return {
    store,
    connectAgain: async () => new SqliteEventStore(file),
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});

describe('SqliteEventStore when its write thread dies', () => {
  const event = (i: number) => ({
    id: randomUUID(),
    type: 'Noted',
    data: { i },
    metadata: { actor: 'test', occurredAt: new Date(0).toISOString() },
  });

  it('acknowledges every append it held exactly once: committed ones found in the file, the others made again on a new thread', async () => {
    const dir = tempDir('events-lost-thread');
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    try {
      let tries = 0;
      let inFlightWhenKilled = 0;
      // Kill the thread while batches are out, until one kill catches some (usually the first).
      while (inFlightWhenKilled === 0 && tries++ < 20) {
        const writer = (store as unknown as { writer: { worker: Worker | null; inFlight: unknown[][] } }).writer;
        // Appends in groups, one group a turn of the loop, so that several batches are out at once.
        const appends: Array<Promise<true | Error>> = [];
        for (let group = 0; group < 30; group++) {
          for (let i = 0; i < 10; i++) {
            const n = appends.length;
            appends.push(
              appendToStream(store, `lost-${tries}-${n}`, [event(n)], 'no_stream').then(
                () => true as const,
                (error: Error) => error,
              ),
            );
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
        inFlightWhenKilled = writer.inFlight.flat().length;
        await writer.worker?.terminate();
        const outcomes = await Promise.all(appends);
        for (const [i, outcome] of outcomes.entries()) {
          expect([i, outcome, (await store.readStream(`lost-${tries}-${i}`)).length]).toEqual([i, true, 1]);
        }
      }
      expect(inFlightWhenKilled).toBeGreaterThan(0);
      // A new thread takes the next writes.
      await expect(appendToStream(store, 'after-the-loss', [event(0)], 'no_stream')).resolves.toMatchObject({ nextExpectedRevision: 0 });
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('acknowledges an append whose commit made it to the file though its answer was lost, and the subscriptions get it', async () => {
    const dir = tempDir('events-lost-answer');
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const writer = (store as unknown as { writer: { run: (...args: unknown[]) => Promise<unknown> } }).writer;
    const run = writer.run.bind(writer);
    const seen: string[] = [];
    const subscription = store.subscribe({ after: null, onEvents: async (events) => void seen.push(...events.map((e) => e.streamId)) });
    try {
      // The commit happens; the answer is lost as if the thread had stopped right after it.
      const lost = jest.spyOn(writer, 'run').mockImplementationOnce(async (kind, args) => {
        await run(kind, args);
        throw new WriteOutcomeUnknown('events.sqlite', new Error('stopped'));
      });
      await expect(appendToStream(store, 'answer-lost', [event(1), event(2)], 'no_stream')).resolves.toMatchObject({
        nextExpectedRevision: 1,
      });
      lost.mockRestore();
      await appendToStream(store, 'answer-lost', [event(3)], 1);
      // Delivered in log order: once an append made after them is seen, they all were (each once).
      await appendToStream(store, 'seen-after', [event(9)], 'no_stream');
      await eventually(
        async () => seen,
        (streams) => streams.includes('seen-after'),
      );
      expect(seen).toEqual(['answer-lost', 'answer-lost', 'answer-lost', 'seen-after']);
      // Not committed: made again (on the next thread), once.
      jest.spyOn(writer, 'run').mockRejectedValueOnce(new WriteOutcomeUnknown('events.sqlite', new Error('stopped')));
      await expect(appendToStream(store, 'written-again', [event(4)], 'no_stream')).resolves.toMatchObject({ nextExpectedRevision: 0 });
      expect(await store.readStream('written-again')).toHaveLength(1);
      // Lost twice: said so, and nothing is acknowledged.
      jest
        .spyOn(writer, 'run')
        .mockRejectedValueOnce(new WriteOutcomeUnknown('events.sqlite', new Error('stopped')))
        .mockRejectedValueOnce(new WriteOutcomeUnknown('events.sqlite', new Error('stopped')));
      await expect(appendToStream(store, 'never-written', [event(5)], 'no_stream')).rejects.toThrow('nothing was written');
      expect(await store.readStream('never-written')).toEqual([]);
    } finally {
      await subscription.close();
      await store.close();
      dir.remove();
    }
  });

  it('after an uncaught error in its write thread, sends it nothing more, and writes on a new thread once it has exited', async () => {
    const dir = tempDir('events-dying-thread');
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const writer = (store as unknown as { writer: { worker: Worker | null; queue: unknown[]; inFlight: unknown[][] } }).writer;
    try {
      await appendToStream(store, 'before', [event(0)], 'no_stream');
      const dying = writer.worker!;
      dying.emit('error', new Error('an uncaught error in the worker'));
      const later = appendToStream(store, 'after-the-error', [event(1)], 'no_stream');
      // Handed to the thread (each look after the loop's pending work, a send among it): queued, not sent.
      await eventually(
        async () => {
          await new Promise((resolve) => setImmediate(resolve));
          return writer.queue.length + writer.inFlight.length;
        },
        (handed) => handed > 0,
      );
      expect(writer.inFlight).toEqual([]);
      expect(writer.queue).toHaveLength(1);
      await dying.terminate();
      await expect(later).resolves.toMatchObject({ nextExpectedRevision: 0 });
      expect(writer.worker).not.toBe(dying);
      expect(await store.readStream('after-the-error')).toHaveLength(1);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});

/** A store on a fresh file for `body`, closed and removed after. */
async function withStore(label: string, body: (store: SqliteEventStore) => Promise<void>) {
  const dir = tempDir(label);
  const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
  try {
    await body(store);
  } finally {
    await store.close();
    dir.remove();
  }
}

describe('SqliteEventStore handing its own appends to the subscriptions', () => {
  /** The events a subscription from the start of the log gets, once it has `count` of them. */
  async function delivered(store: SqliteEventStore, count: number) {
    const seen: RecordedEvent[] = [];
    let done: () => void = () => undefined;
    const enough = new Promise<void>((resolve) => (done = resolve));
    const subscription = store.subscribe({
      after: null,
      onEvents: async (events) => {
        seen.push(...events);
        if (seen.length >= count) done();
      },
    });
    await enough;
    await subscription.close();
    return seen;
  }

  const metadataAt0 = () => ({ actor: 'test', occurredAt: new Date(0).toISOString() });
  const appendOne = (store: SqliteEventStore, streamId: string, type: string, data: unknown, metadata = metadataAt0()) =>
    appendToStream(store, streamId, [{ id: randomUUID(), type, data, metadata }], 'no_stream');

  it('gives the appended objects themselves, frozen, when JSON would give them back unchanged; the same as the file holds', () =>
    withStore('events-own-objects', async (store) => {
      const data = { dealId: 'd-1', units: [{ n: 1 }, { n: 2 }], note: null };
      const metadata = metadataAt0();
      await appendOne(store, 'own-1', 'Held', data, metadata);
      const [event] = await delivered(store, 1);
      expect(event.data).toBe(data);
      expect(event.metadata).toBe(metadata);
      expect(Object.isFrozen(data) && Object.isFrozen(data.units[1])).toBe(true);
      expect(() => {
        (event.data as { note: unknown }).note = 'changed';
      }).toThrow(TypeError);
      const [fromFile] = await store.readStream('own-1');
      expect(fromFile.data).toEqual(event.data);
      expect(fromFile.metadata).toEqual(event.metadata);
    }));

  it('gives what the file holds when JSON would change the event, and leaves the branch JSON changes unfrozen', () =>
    withStore('events-own-json', async (store) => {
      const data = { kept: { n: 1 }, at: new Date(Date.UTC(2026, 0, 1)), gone: undefined };
      await appendOne(store, 'own-2', 'Odd', data);
      const [event] = await delivered(store, 1);
      expect(event.data).toEqual({ kept: { n: 1 }, at: '2026-01-01T00:00:00.000Z' });
      expect(event.data).toEqual((await store.readStream('own-2'))[0].data);
      expect(event.data).not.toBe(data);
      expect(Object.isFrozen(data)).toBe(false);
    }));

  it('freezes the appended objects at the append, so the subscriptions get what was written however late they read', () =>
    withStore('events-own-late', async (store) => {
      const data = { units: 1 };
      await appendOne(store, 'own-3', 'Held', data);
      // No subscription has read it yet: an appender changing its event now is stopped at once.
      expect(Object.isFrozen(data)).toBe(true);
      expect(() => {
        (data as { units: number }).units = 2;
      }).toThrow(TypeError);
      const [event] = await delivered(store, 1);
      expect(event.data).toEqual({ units: 1 });
    }));
});

describe('SqliteEventStore appends as they cross to the write thread', () => {
  it('encodes an append as one string of its fields, and decodes it back whole', () => {
    const args = {
      streamId: 'inventory-deal-1',
      expected: 41,
      events: [
        ['e-1', 'UnitsHeld', '{"text":"a\\u0001b, with \\"quotes\\""}', '{"actor":"p"}'],
        ['e-2', 'UnitsSold', '{}', '{"actor":"p"}'],
      ] as Array<[string, string, string, string]>,
    };
    const encoded = encodeAppend(args);
    expect(typeof encoded).toBe('string');
    expect(decodeAppend(encoded as string)).toEqual(args);
    for (const expected of ['no_stream', 'any', 0] as const)
      expect(decodeAppend(encodeAppend({ ...args, expected }) as string)).toEqual({ ...args, expected });
    expect(decodeAppend(encodeAppend({ ...args, events: [] }) as string)).toEqual({ ...args, events: [] });
    // The program's replies, as numbers.
    expect(decodeAppendReply([0, -1])).toEqual({ written: false, actual: null });
    expect(decodeAppendReply([0, 3])).toEqual({ written: false, actual: 3 });
    expect(decodeAppendReply([1, 42, 7])).toEqual({ written: true, revision: 42, position: 7 });
  });

  it('sends the arguments as they are when a part is not of the forms the port allows', () => {
    const events: Array<[string, string, string, string]> = [['e', 'T', '{}', '{}']];
    for (const expected of [-1, 1.5, Number.NaN, '3', null, 5n] as unknown[]) {
      expect(typeof encodeAppend({ streamId: 's', expected: expected as number, events })).toBe('object');
    }
    expect(typeof encodeAppend({ streamId: 's', expected: 0, events: [[7 as unknown as string, 'T', '{}', '{}']] })).toBe('object');
    expect(typeof encodeAppend({ streamId: 's', expected: 0, events: [['e', 'T', undefined as unknown as string, '{}']] })).toBe('object');
  });

  it('refuses an event whose data or metadata has no JSON form, writing nothing, and the stream stays readable', () =>
    withStore('events-no-json', async (store) => {
      const metadata = { actor: 'test', occurredAt: new Date(0).toISOString() };
      await expect(
        appendToStream(store, 'no-json', [{ id: randomUUID(), type: 'NoData', data: undefined, metadata }], 'no_stream'),
      ).rejects.toThrow(/data has no JSON form; nothing was appended/);
      await expect(
        appendToStream(
          store,
          'no-json',
          [
            { id: randomUUID(), type: 'Fine', data: {}, metadata },
            { id: randomUUID(), type: 'NoMeta', data: {}, metadata: (() => 1) as never },
          ],
          'no_stream',
        ),
      ).rejects.toThrow(/metadata has no JSON form/);
      // A cycle is refused by JSON, as it says; a refused append leaves what it was given unfrozen.
      const cyclic: Record<string, unknown> = { n: 1 };
      cyclic.self = cyclic;
      const before = { n: 0 };
      await expect(
        appendToStream(
          store,
          'no-json',
          [
            { id: randomUUID(), type: 'Fine', data: before, metadata },
            { id: randomUUID(), type: 'Cycle', data: cyclic, metadata },
          ],
          'no_stream',
        ),
      ).rejects.toThrow(/circular/);
      expect(Object.isFrozen(before) || Object.isFrozen(metadata)).toBe(false);
      await appendToStream(store, 'no-json', [{ id: randomUUID(), type: 'Null', data: null, metadata }], 'no_stream');
      expect((await store.readStream('no-json')).map((e) => [e.type, e.data, e.revision])).toEqual([['Null', null, 0]]);
      expect((await store.readAll({ after: null, maxCount: 10 })).map((e) => e.type)).toEqual(['Null']);
    }));

  it('sends the arguments as they are when an id holds the separator, and writes them the same', () =>
    withStore('events-separator', async (store) => {
      const odd = 'stream\u0001with-separator';
      expect(typeof encodeAppend({ streamId: odd, expected: 'no_stream', events: [['e', 'T', '{}', '{}']] })).toBe('object');
      expect(typeof encodeAppend({ streamId: 's', expected: 'any', events: [['e\u0001', 'T', '{}', '{}']] })).toBe('object');
      const metadata = { actor: 'test', occurredAt: new Date(0).toISOString() };
      await appendToStream(store, odd, [{ id: randomUUID(), type: 'Odd\u0001Type', data: { text: 'x\u0001y' }, metadata }], 'no_stream');
      await appendToStream(store, odd, [{ id: randomUUID(), type: 'Plain', data: { n: 2 }, metadata }], 0);
      await expect(appendToStream(store, odd, [{ id: randomUUID(), type: 'Late', data: {}, metadata }], 0)).rejects.toThrow(/expected/i);
      const events = await store.readStream(odd);
      expect(events.map((e) => [e.streamId, e.type, e.data, e.revision])).toEqual([
        [odd, 'Odd\u0001Type', { text: 'x\u0001y' }, 0],
        [odd, 'Plain', { n: 2 }, 1],
      ]);
    }));

  it('writes each of several events of an append with its own data and the shared metadata, in any expected form', () =>
    withStore('events-encoded', async (store) => {
      const metadata = { actor: 'test', occurredAt: new Date(0).toISOString(), requestId: 'r-1' };
      const data = [{ text: 'quotes " and \\ and \n' }, { emoji: '🎟️' }, { n: -1.5 }];
      await appendToStream(
        store,
        'encoded',
        data.map((d, i) => ({ id: randomUUID(), type: `T${i}`, data: d, metadata })),
        'no_stream',
      );
      await appendToStream(store, 'encoded', [{ id: randomUUID(), type: 'Any', data: {}, metadata }], 'any');
      const events = await store.readStream('encoded');
      expect(events.map((e) => [e.type, e.data, e.metadata, e.revision])).toEqual([
        ['T0', data[0], metadata, 0],
        ['T1', data[1], metadata, 1],
        ['T2', data[2], metadata, 2],
        ['Any', {}, metadata, 3],
      ]);
    }));

  it('encodes a metadata object it froze once, for every append that carries it; one it could not freeze at each append', () =>
    withStore('events-metadata-once', async (store) => {
      const stringify = jest.spyOn(JSON, 'stringify');
      try {
        const shared = { actor: 'test', occurredAt: new Date(0).toISOString(), requestId: 'r-1' };
        for (const stream of ['m-1', 'm-2', 'm-3'])
          await appendToStream(store, stream, [{ id: randomUUID(), type: 'T', data: { stream }, metadata: shared }], 'no_stream');
        expect(stringify.mock.calls.filter(([value]) => value === shared)).toHaveLength(1);
        // Not JSON as it is (a Date): not frozen, so it may change between appends, and each append encodes it as it is then.
        const open = { actor: 'test', occurredAt: new Date(0).toISOString(), at: new Date(Date.UTC(2026, 0, 1)) };
        await appendToStream(store, 'm-4', [{ id: randomUUID(), type: 'T', data: {}, metadata: open }], 'no_stream');
        open.actor = 'changed';
        await appendToStream(store, 'm-5', [{ id: randomUUID(), type: 'T', data: {}, metadata: open }], 'no_stream');
        expect(stringify.mock.calls.filter(([value]) => value === open)).toHaveLength(2);
        const read = async (stream: string) => (await store.readStream(stream))[0].metadata;
        expect(await read('m-1')).toEqual(shared);
        expect(await read('m-3')).toEqual(shared);
        expect(await read('m-4')).toEqual({ actor: 'test', occurredAt: shared.occurredAt, at: '2026-01-01T00:00:00.000Z' });
        expect(await read('m-5')).toEqual({ actor: 'changed', occurredAt: shared.occurredAt, at: '2026-01-01T00:00:00.000Z' });
      } finally {
        stringify.mockRestore();
      }
    }));
});

describe('SqliteEventStore own rows kept for the subscriptions', () => {
  const metadata = { actor: 'test', occurredAt: new Date(0).toISOString() };
  const ownRows = (store: SqliteEventStore) => (store as unknown as { feed: { ownRows: Map<number, unknown> } }).feed.ownRows;

  it('drops a row once every open subscription has read it, keeps it while one has not, and a later subscription reads the file', async () => {
    const dir = tempDir('events-own-rows');
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const fast: string[] = [];
    const slow: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const subscriptions = [
      store.subscribe({ after: null, onEvents: async (events) => void fast.push(...events.map((e) => e.type)) }),
      store.subscribe({
        after: null,
        onEvents: async (events) => {
          await held; // this one is still busy with its first page
          slow.push(...events.map((e) => e.type));
        },
      }),
    ];
    try {
      await appendToStream(store, 'a', [{ id: randomUUID(), type: 'First', data: {}, metadata }], 'no_stream');
      await eventually(
        async () => fast.length,
        (n) => n === 1,
      );
      await appendToStream(store, 'a', [{ id: randomUUID(), type: 'Second', data: {}, metadata }], 0);
      await eventually(
        async () => fast.length,
        (n) => n === 2,
      );
      expect(fast).toEqual(['First', 'Second']);
      expect([...ownRows(store).keys()]).toEqual([1, 2]); // the slow one has read neither
      release();
      await eventually(
        async () => null,
        () => slow.length === 2 && ownRows(store).size === 0,
      );
      expect(slow).toEqual(['First', 'Second']);
      expect(ownRows(store).size).toBe(0);
      // Read by all, dropped: a subscription from the start reads them from the file.
      const late: string[] = [];
      const lateOne = store.subscribe({ after: null, onEvents: async (events) => void late.push(...events.map((e) => e.type)) });
      await eventually(
        async () => late.length,
        (n) => n === 2,
      );
      await lateOne.close();
      expect(late).toEqual(['First', 'Second']);
      // A subscription closed while it delivers does not drop rows for the next one.
      let finish: () => void = () => undefined;
      const delivering = new Promise<void>((resolve) => (finish = resolve));
      for (const subscription of subscriptions) await subscription.close();
      subscriptions.length = 0;
      let started: () => void = () => undefined;
      const startedDelivering = new Promise<void>((resolve) => (started = resolve));
      const closing = store.subscribe({
        after: null,
        onEvents: async () => {
          started();
          await delivering;
        },
      });
      await appendToStream(store, 'a', [{ id: randomUUID(), type: 'Third', data: {}, metadata }], 1);
      await startedDelivering;
      const closed = closing.close();
      finish();
      await closed;
      expect([...ownRows(store).keys()]).toEqual([3]);
    } finally {
      for (const subscription of subscriptions) await subscription.close();
      await store.close();
      dir.remove();
    }
  });
});
