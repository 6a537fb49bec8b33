import { CheckpointListener, EventStore, LogPosition, Projection, RequestWrites, ViewStore } from '@deals/kernel';
import { ProjectionHost } from './projection-host';
import { ServiceConfig } from './service-config';

const pos = (n: number) => String(n).padStart(20, '0');

/** The views of another process (a worker keeps them): checkpoints to read, and notices when `tells`. */
class OtherProcessViews {
  readonly inProcess = false;
  listener: CheckpointListener | null = null;
  readonly checkpoints = new Map<string, LogPosition>();
  reads = 0;

  constructor(private readonly tells: boolean) {}

  onCheckpoints(listener: CheckpointListener): (() => void) | null {
    if (!this.tells) return null;
    this.listener = listener;
    return () => (this.listener = null);
  }

  onGenerationSwitch(): () => void {
    return () => undefined;
  }

  writer(collection: string) {
    return {
      checkpoint: async () => {
        this.reads++;
        return this.checkpoints.get(collection) ?? null;
      },
    };
  }
}

function host(views: OtherProcessViews): ProjectionHost {
  const projection = { name: 'deal_details', handles: ['DealCreated'] } as unknown as Projection;
  return new ProjectionHost({} as EventStore, views as unknown as ViewStore, [projection], {
    readYourWritesTimeoutMs: 2000,
  } as ServiceConfig);
}

/** Lets the loop run what is pending: with the timers faked, only those the test moves past fire. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled once the work pending has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await turn();
  return done;
}

/**
 * Time moves only as a test says (`advanceTimersByTimeAsync`): a wait answered without it was
 * answered by a notice or a read, never by its timeout (2 s here).
 */
describe('ProjectionHost in a process that keeps no views', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('answers once a notice says the view reached the position, reading the checkpoint only when listening begins', async () => {
    const views = new OtherProcessViews(true);
    const projections = host(views);
    const waiting = projections.waitFor(['deal_details'], pos(5));
    // Listening began: the store asks for a read (what was committed before is in no notice).
    views.listener!.resync();
    await turn();
    expect(views.reads).toBe(1);
    views.listener!.reached('deal_details', pos(4));
    expect(await settled(waiting)).toBe(false);
    views.listener!.reached('deal_details', pos(5));
    expect(await settled(waiting)).toBe(true);
    expect(views.reads).toBe(1);
    // A position already heard of is answered at once.
    expect(await settled(projections.waitFor(['deal_details'], pos(5)))).toBe(true);
  });

  it('reads the checkpoint after half a second without a notice (one lost while reconnecting)', async () => {
    const views = new OtherProcessViews(true);
    const projections = host(views);
    const waiting = Promise.all([projections.waitFor(['deal_details'], pos(7)), projections.waitFor(['deal_details'], pos(6))]);
    views.checkpoints.set('deal_details', pos(7));
    await jest.advanceTimersByTimeAsync(499);
    expect(await settled(waiting)).toBe(false);
    expect(views.reads).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
    // One read served both waiters.
    expect(views.reads).toBe(1);
  });

  it('polls the checkpoint where the store tells of none', async () => {
    const views = new OtherProcessViews(false);
    const projections = host(views);
    const waiting = projections.waitFor(['deal_details'], pos(3));
    await jest.advanceTimersByTimeAsync(100);
    expect(await settled(waiting)).toBe(false);
    views.checkpoints.set('deal_details', pos(3));
    // Read again within a poll's interval.
    await jest.advanceTimersByTimeAsync(20);
    expect(await settled(waiting)).toBe(true);
    expect(views.reads).toBeGreaterThan(2);
  });

  it('keeps polling, without an unhandled failure, when the store is closed under a waiting answer', async () => {
    const views = new OtherProcessViews(false);
    const projections = host(views);
    const waiting = projections.waitFor(['deal_details'], pos(3));
    let closed = false;
    views.writer = (collection: string) => {
      if (closed) throw new Error(`view collection ${collection} is not defined`);
      return { checkpoint: async () => views.checkpoints.get(collection) ?? null };
    };
    closed = true;
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      await jest.advanceTimersByTimeAsync(150);
      expect(await settled(waiting)).toBe(false);
      closed = false;
      views.checkpoints.set('deal_details', pos(3));
      await jest.advanceTimersByTimeAsync(20);
      expect(await settled(waiting)).toBe(true);
      await turn();
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe("ProjectionHost: writes left to the caller's next reads", () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  function twoViews(views: OtherProcessViews): ProjectionHost {
    const projections = [
      { name: 'deal_details', handles: ['UnitsSold'] },
      { name: 'purchase_details', handles: ['UnitsSold', 'PurchasePaid'] },
    ] as unknown as Projection[];
    return new ProjectionHost({} as EventStore, views as unknown as ViewStore, projections, {
      readYourWritesTimeoutMs: 2000,
    } as ServiceConfig);
  }

  it("makes the writer's next read wait for the views it left, and no other reader's", async () => {
    const views = new OtherProcessViews(true);
    const projections = twoViews(views);
    expect(projections.readerWaits('partner-a')).toBeNull();
    const writes = new RequestWrites();
    writes.note(pos(7), [
      { type: 'UnitsSold', data: {} },
      { type: 'PurchasePaid', data: {} },
    ]);
    // The purchase's view holds the writes already (written ahead): only the deal's is left.
    writes.shown.add('purchase_details');
    projections.deferWrites('partner-a', writes);
    expect(projections.readerWaits('partner-b')).toBeNull();
    const reading = projections.readerWaits('partner-a')!;
    views.listener!.resync();
    await turn();
    views.listener!.reached('deal_details', pos(6));
    expect(await settled(reading)).toBe(false);
    views.listener!.reached('deal_details', pos(7));
    expect(await settled(reading)).toBe(true);
    // Shown: forgotten.
    expect(projections.readerWaits('partner-a')).toBeNull();
  });

  it('waits only for the views a route reads, when it says which', async () => {
    const views = new OtherProcessViews(true);
    const projections = twoViews(views);
    const writes = new RequestWrites();
    writes.note(pos(7), [{ type: 'UnitsSold', data: {} }]);
    projections.deferWrites('partner-a', writes);
    expect(projections.readerWaits('partner-a', ['other_view'])).toBeNull();
    const purchase = projections.readerWaits('partner-a', ['purchase_details'])!;
    views.listener!.resync();
    await turn();
    views.listener!.reached('purchase_details', pos(7));
    expect(await settled(purchase)).toBe(true);
    // The deal's view is still owed to a read that reads it (or says nothing).
    const any = projections.readerWaits('partner-a')!;
    expect(await settled(any)).toBe(false);
    views.listener!.reached('deal_details', pos(7));
    expect(await settled(any)).toBe(true);
  });

  it('holds no read past the bound after the write, and forgets readers that never read again', async () => {
    const views = new OtherProcessViews(true);
    const projections = twoViews(views);
    const writes = new RequestWrites();
    writes.note(pos(9), [{ type: 'PurchasePaid', data: {} }]);
    projections.deferWrites('partner-a', writes);
    await jest.advanceTimersByTimeAsync(1500);
    // 500 ms of the bound are left: the read waits no longer.
    const reading = projections.readerWaits('partner-a')!;
    views.listener!.resync();
    await jest.advanceTimersByTimeAsync(499);
    expect(await settled(reading)).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await settled(reading)).toBe(true);
    projections.deferWrites('partner-a', writes);
    await jest.advanceTimersByTimeAsync(2000);
    expect(projections.readerWaits('partner-a')).toBeNull();
    const deferred = (projections as unknown as { deferred: Map<string, unknown> }).deferred;
    for (let i = 0; i < 1024; i++) projections.deferWrites(`once-${i}`, writes);
    await jest.advanceTimersByTimeAsync(2000);
    for (let i = 0; i < 1024; i++) projections.deferWrites(`later-${i}`, writes);
    expect(deferred.size).toBe(1024);
  });

  it('lets a read go on with what the views hold after the bound, and forgets what it waited for', async () => {
    const views = new OtherProcessViews(true);
    const projections = twoViews(views);
    const writes = new RequestWrites();
    writes.note(pos(9), [{ type: 'PurchasePaid', data: {} }]);
    projections.deferWrites('partner-a', writes);
    const reading = projections.readerWaits('partner-a')!;
    views.listener!.resync();
    await jest.advanceTimersByTimeAsync(1999);
    expect(await settled(reading)).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await settled(reading)).toBe(true);
    expect(projections.readerWaits('partner-a')).toBeNull();
  });
});
