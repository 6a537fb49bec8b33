import { CannotFulfil, Decider, handleCommand } from '@deals/kernel';
import { join } from 'node:path';
import { SqliteEventStore } from '../../libs/adapters/src/event-store/sqlite/sqlite-event-store.adapter';
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
});
