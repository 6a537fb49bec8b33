import { CannotFulfil, Decider, handleCommand, RequestWrites } from '@deals/kernel';
import { join } from 'node:path';
import { SqliteEventStore } from '@deals/adapters/event-store/sqlite/sqlite-event-store.adapter';
import { tempDir } from '../support/temp-dir';

type Taken = { type: 'Taken'; data: { n: number } };
type Take = { type: 'Take'; data: { n: number } };
/** A stock of ten that two "processes" draw from. */
const stock: Decider<{ left: number }, Take, Taken> = {
  initialState: () => ({ left: 10 }),
  decide: (command, state) => {
    if (command.data.n > state.left) throw new CannotFulfil('not enough');
    return [{ type: 'Taken', data: { n: command.data.n } }];
  },
  evolve: (state, event) => ({ left: state.left - event.data.n }),
};

describe('handleCommand across two processes sharing one log', () => {
  const dir = tempDir('handle');
  const file = join(dir.path, 'events.sqlite');
  const a = new SqliteEventStore(file);
  const b = new SqliteEventStore(file);
  afterAll(async () => {
    await a.close();
    await b.close();
    dir.remove();
  });

  it('never oversells, whichever process caches what, and retries conflicts', async () => {
    const take = (store: SqliteEventStore) =>
      handleCommand(store, 'stock-1', stock, { type: 'Take', data: { n: 1 } }, { now: new Date(), metadata: { actor: 'test' } }).then(
        () => 'ok',
        (error) => (error instanceof CannotFulfil ? 'refused' : Promise.reject(error)),
      );
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => take(i % 2 ? a : b)));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(10);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(20);
    expect(await a.readStream('stock-1')).toHaveLength(10);
    // Each process's cached state catches up with the other's appends before deciding.
    expect(await take(a)).toBe('refused');
    expect(await take(b)).toBe('refused');
  });

  it('decides the commands waiting on one stream together and writes them in one append each round', async () => {
    const appends: number[] = [];
    const append = a.appendToStreams.bind(a);
    const spy = jest.spyOn(a, 'appendToStreams').mockImplementation((written) => {
      for (const { streamId, events } of written) if (streamId === 'stock-2') appends.push(events.length);
      return append(written);
    });
    try {
      const context = { now: new Date(), metadata: { actor: 'test' } };
      const outcomes = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) =>
          handleCommand(a, 'stock-2', stock, { type: 'Take', data: { n: i % 3 === 0 ? 2 : 1 } }, context),
        ),
      );
      const taken = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o] : []));
      const refused = outcomes.filter((o) => o.status === 'rejected');
      // Decided in arrival order against the state the earlier ones leave: 2+1+1+2+1+1+2 = 10.
      expect(taken).toHaveLength(7);
      expect(refused.every((o) => (o as PromiseRejectedResult).reason instanceof CannotFulfil)).toBe(true);
      // Each command has its own revision; the position is its batch's last event, written once.
      expect(taken.map((o) => o.value.revision)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      expect(taken.map((o) => (o.value.state as { left: number }).left)).toEqual([8, 7, 6, 4, 3, 2, 0]);
      const log = await a.readStream('stock-2');
      expect(taken.every((o) => o.value.position === log[log.length - 1].position)).toBe(true);
      expect(appends).toEqual([7]);
    } finally {
      spy.mockRestore();
    }
  });

  it('catches up with what another process wrote before deciding a batch', async () => {
    const context = { now: new Date(), metadata: { actor: 'test' } };
    // a caches stock-3 at revision 0; b then takes 8 behind its back.
    await handleCommand(a, 'stock-3', stock, { type: 'Take', data: { n: 1 } }, context);
    await handleCommand(b, 'stock-3', stock, { type: 'Take', data: { n: 8 } }, context);
    const outcomes = await Promise.allSettled(
      [1, 1].map((n) => handleCommand(a, 'stock-3', stock, { type: 'Take', data: { n } }, context)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    expect((await a.readStream('stock-3')).map((e) => (e.data as { n: number }).n)).toEqual([1, 8, 1]);
  });

  it("reports, for a command with nothing to say, the position of the stream's last event, another process's too", async () => {
    type Marked = { type: 'Marked'; data: { by: string } };
    type Mark = { type: 'Mark'; data: { by: string } };
    const once: Decider<{ marked: boolean }, Mark, Marked> = {
      initialState: () => ({ marked: false }),
      decide: (command, state) => (state.marked ? [] : [{ type: 'Marked', data: { by: command.data.by } }]),
      evolve: () => ({ marked: true }),
    };
    const context = { now: new Date(), metadata: { actor: 'test' } };
    const mark = (store: SqliteEventStore, stream: string, by: string, fresh = false) =>
      handleCommand(store, stream, once, { type: 'Mark', data: { by } }, context, { freshStream: fresh });

    const first = await mark(a, 'once-1', 'a');
    expect(first.events).toHaveLength(1);
    // Read by b (nothing cached), decided again by a from its cache: both rest on a's event.
    for (const again of [await mark(b, 'once-1', 'b'), await mark(a, 'once-1', 'a')]) {
      expect(again).toMatchObject({ events: [], revision: 0, position: first.position });
    }
    // A fresh stream another process wrote: the refused append is decided again on a read.
    const written = await mark(a, 'once-2', 'a');
    expect(await mark(b, 'once-2', 'b', true)).toMatchObject({ events: [], position: written.position });
    // Other streams written since do not move it.
    await mark(a, 'once-3', 'a');
    expect((await mark(b, 'once-1', 'b')).position).toBe(first.position);
  });

  it('decides on a fresh stream without reading it, and on a read when it exists after all', async () => {
    const context = { now: new Date(), metadata: { actor: 'test' } };
    const reads = jest.spyOn(a, 'readStream');
    try {
      await handleCommand(a, 'stock-4', stock, { type: 'Take', data: { n: 3 } }, context, { freshStream: true });
      expect(reads).not.toHaveBeenCalled();
      // b wrote stock-5 first, so a's "fresh" append expects no stream, is refused, and a reads and decides again.
      await handleCommand(b, 'stock-5', stock, { type: 'Take', data: { n: 8 } }, context);
      const outcomes = await Promise.allSettled(
        [2, 1].map((n) => handleCommand(a, 'stock-5', stock, { type: 'Take', data: { n } }, context, { freshStream: true })),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
      expect((await a.readStream('stock-5')).map((e) => (e.data as { n: number }).n)).toEqual([8, 2]);
      expect(reads).toHaveBeenCalledWith('stock-5', 0);
    } finally {
      reads.mockRestore();
    }
  });

  it('gives the commands of one context one metadata object; a new context, time or caller its own', async () => {
    const append = jest.spyOn(a, 'appendToStreams');
    try {
      const caller = { actor: 'test', requestId: 'r-1' };
      const context = { now: new Date(Date.UTC(2026, 0, 1)), metadata: caller };
      const take = (stream: string, given: { now: Date; metadata: typeof caller }) =>
        handleCommand(a, stream, stock, { type: 'Take', data: { n: 1 } }, given);
      await Promise.all([take('meta-1', context), take('meta-2', context)]);
      await take('meta-3', context);
      await take('meta-4', { ...context });
      context.now = new Date(Date.UTC(2026, 0, 2));
      await take('meta-5', context);
      context.metadata = { ...caller, requestId: 'r-2' };
      await take('meta-6', context);
      const metadata = append.mock.calls.map(([[{ events }]]) => events[0].metadata);
      expect(metadata).toHaveLength(6);
      expect(metadata[1]).toBe(metadata[0]);
      expect(metadata[2]).toBe(metadata[0]);
      for (const other of metadata.slice(3)) expect(other).not.toBe(metadata[0]);
      expect(metadata[3]).toEqual(metadata[0]);
      expect(metadata.map((m) => [m.occurredAt, m.requestId])).toEqual([
        ...Array(4).fill(['2026-01-01T00:00:00.000Z', 'r-1']),
        ['2026-01-02T00:00:00.000Z', 'r-1'],
        ['2026-01-02T00:00:00.000Z', 'r-2'],
      ]);
    } finally {
      append.mockRestore();
    }
  });
  it("tells the caller's request what its commands appended, not what a refusal rested on, and keeps it out of the log", async () => {
    const writes = new RequestWrites();
    const context = { now: new Date(), metadata: { actor: 'test', requestId: 'r-w', writes } };
    const take = (store: SqliteEventStore, n: number) => handleCommand(store, 'stock-6', stock, { type: 'Take', data: { n } }, context);
    await expect(take(a, 11)).rejects.toBeInstanceOf(CannotFulfil);
    expect(writes.positions.size).toBe(0);
    const first = await take(a, 2);
    const second = await take(b, 3);
    expect(second.position! > first.position!).toBe(true);
    expect([...writes.positions]).toEqual([['Taken', second.position]]);
    // Another request's append, later in the log, is not this one's.
    await handleCommand(a, 'stock-6', stock, { type: 'Take', data: { n: 1 } }, { now: new Date(), metadata: { actor: 'test' } });
    await expect(take(a, 9)).rejects.toBeInstanceOf(CannotFulfil);
    expect(writes.positions.get('Taken')).toBe(second.position);
    expect((await a.readStream('stock-6')).map((e) => Object.keys(e.metadata).sort())).toEqual([
      ['actor', 'occurredAt', 'requestId'],
      ['actor', 'occurredAt', 'requestId'],
      ['actor', 'occurredAt'],
    ]);
  });
});
