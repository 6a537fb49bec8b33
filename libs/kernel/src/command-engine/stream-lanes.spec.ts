import { LaneWriter, MAX_BATCH, Queued, StreamLanes } from './stream-lanes';

interface Item extends Queued {
  name: string;
  rejected: unknown;
}

const item = (name: string, decider: unknown = 'decider'): Item => ({
  name,
  decider,
  rejected: undefined,
  reject(error) {
    this.rejected = error;
  },
});

/** A writer whose writes end when the test says so: `writes` holds each call, in order. */
class HeldWriter implements LaneWriter<Item> {
  readonly writes: Array<{ streamId: string; names: string[]; finish: () => void; fail: (error: unknown) => void }> = [];

  write(streamId: string, batch: Item[]): Promise<void> {
    return new Promise((finish, fail) => this.writes.push({ streamId, names: batch.map((w) => w.name), finish, fail }));
  }

  batches(): string[][] {
    return this.writes.map((w) => w.names);
  }
}

/** Lets every promise callback queued so far run (the lanes' turns, the writes' endings). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('stream lanes', () => {
  it('writes the commands of one stream that arrive in the same turn as one batch', async () => {
    const writer = new HeldWriter();
    const lanes = new StreamLanes(writer);
    for (const name of ['a', 'b', 'c']) lanes.enqueue('s-1', item(name));
    await settled();
    expect(writer.writes.map((w) => [w.streamId, w.names])).toEqual([['s-1', ['a', 'b', 'c']]]);
  });

  it('writes one batch of a stream at a time: those arriving during a write go out together after it', async () => {
    const writer = new HeldWriter();
    const lanes = new StreamLanes(writer);
    lanes.enqueue('s-1', item('a'));
    await settled();
    lanes.enqueue('s-1', item('b'));
    lanes.enqueue('s-1', item('c'));
    await settled();
    expect(writer.batches()).toEqual([['a']]);
    writer.writes[0].finish();
    await settled();
    expect(writer.batches()).toEqual([['a'], ['b', 'c']]);
  });

  it('writes different streams at the same time', async () => {
    const writer = new HeldWriter();
    const lanes = new StreamLanes(writer);
    lanes.enqueue('s-1', item('a'));
    lanes.enqueue('s-2', item('b'));
    await settled();
    // Both writes are under way, neither has ended.
    expect(writer.writes.map((w) => [w.streamId, w.names])).toEqual([
      ['s-1', ['a']],
      ['s-2', ['b']],
    ]);
  });

  it('puts at most MAX_BATCH commands in a batch, and commands of one decider only', async () => {
    const writer = new HeldWriter();
    const lanes = new StreamLanes(writer);
    for (let i = 0; i < MAX_BATCH + 2; i++) lanes.enqueue('s-1', item(`c${i}`));
    lanes.enqueue('s-1', item('other', 'another decider'));
    lanes.enqueue('s-1', item('last'));
    await settled();
    writer.writes[0].finish();
    await settled();
    writer.writes[1].finish();
    await settled();
    writer.writes[2].finish();
    await settled();
    expect(writer.batches().map((names) => names.length)).toEqual([MAX_BATCH, 2, 1, 1]);
    expect(writer.batches().slice(1)).toEqual([[`c${MAX_BATCH}`, `c${MAX_BATCH + 1}`], ['other'], ['last']]);
  });

  it('fails only the commands of a batch whose write throws, and goes on with the next batch', async () => {
    const writer = new HeldWriter();
    const lanes = new StreamLanes(writer);
    const [a, b, c] = ['a', 'b', 'c'].map((name) => item(name));
    lanes.enqueue('s-1', a);
    lanes.enqueue('s-1', b);
    await settled();
    lanes.enqueue('s-1', c);
    const broken = new Error('disk full');
    writer.writes[0].fail(broken);
    await settled();
    expect([a.rejected, b.rejected, c.rejected]).toEqual([broken, broken, undefined]);
    expect(writer.batches()).toEqual([['a', 'b'], ['c']]);
    writer.writes[1].finish();
    await settled();
    expect(c.rejected).toBeUndefined();
  });

  it('starts the stream again for a command that comes after its last batch was written', async () => {
    const writer = new HeldWriter();
    const lanes = new StreamLanes(writer);
    lanes.enqueue('s-1', item('a'));
    await settled();
    writer.writes[0].finish();
    await settled();
    lanes.enqueue('s-1', item('b'));
    await settled();
    expect(writer.batches()).toEqual([['a'], ['b']]);
  });
});
