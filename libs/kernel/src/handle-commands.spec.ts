import { MemoryEventStore } from '@deals/testing';
import { Decider } from './decider';
import { handleCommand, handleCommands } from './handle-command';

/** A counter: `Add` of 0 has nothing to say, one past 10 is refused. */
type Added = { type: 'Added'; data: { n: number } };
type Add = { type: 'Add'; data: { n: number } };
const counter: Decider<{ total: number }, Add, Added> = {
  initialState: () => ({ total: 0 }),
  decide: ({ data: { n } }, state) => {
    if (state.total + n > 10) throw new RangeError(`${state.total} + ${n} > 10`);
    return n === 0 ? [] : [{ type: 'Added', data: { n } }];
  },
  evolve: (state, { data: { n } }) => ({ total: state.total + n }),
};
const other: typeof counter = { ...counter };
const add = (n: number): Add => ({ type: 'Add', data: { n } });
const context = { now: new Date('2026-06-15T12:00:00Z'), metadata: { actor: 'test' } };

describe('handleCommands', () => {
  it("writes a unit in its lane stream's turn, with the commands waiting there, in one write across streams", async () => {
    const store = new MemoryEventStore();
    const appends = jest.spyOn(store, 'append');
    const across = jest.spyOn(store, 'appendToStreams');
    const alone = handleCommand(store, 'hot', counter, add(1), context);
    const unit = handleCommands(
      store,
      [
        { streamId: 'lock-u1', decider: counter, command: add(1) },
        { streamId: 'hot', decider: counter, command: add(2), lane: true },
        { streamId: 'purchase-p1', decider: counter, command: add(3), freshStream: true },
      ],
      context,
    );
    const [one, parts] = await Promise.all([alone, unit]);
    expect(appends).not.toHaveBeenCalled();
    expect(across).toHaveBeenCalledTimes(1);
    expect(across.mock.calls[0][0].map((a) => [a.streamId, a.events.length])).toEqual([
      ['hot', 2],
      ['lock-u1', 1],
      ['purchase-p1', 1],
    ]);
    expect(one.state).toEqual({ total: 1 });
    expect(parts.map((p) => p.state)).toEqual([{ total: 1 }, { total: 3 }, { total: 3 }]);
    expect(new Set([one.position, ...parts.map((p) => p.position)]).size).toBe(1);
  });

  it('writes nothing of a refused unit, and answers its first refused part', async () => {
    const store = new MemoryEventStore();
    await expect(
      handleCommands(
        store,
        [
          { streamId: 'a', decider: counter, command: add(4) },
          { streamId: 'b', decider: counter, command: add(11) },
          { streamId: 'c', decider: counter, command: add(12) },
        ],
        context,
      ),
    ).rejects.toThrow('0 + 11 > 10');
    expect(store.streams.size).toBe(0);
  });

  it('refuses a unit without commands, or with two deciders for its lane stream', async () => {
    const store = new MemoryEventStore();
    await expect(handleCommands(store, [], context)).rejects.toBeInstanceOf(TypeError);
    await expect(
      handleCommands(
        store,
        [
          { streamId: 'a', decider: counter, command: add(1) },
          { streamId: 'a', decider: other, command: add(1) },
        ],
        context,
      ),
    ).rejects.toBeInstanceOf(TypeError);
  });
});
