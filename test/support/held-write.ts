import { EventStore } from '@deals/kernel';
import type { TestApi } from './api-harness';

/** The store's methods a unit of work's append goes through first (see `BatchWriter.write`). */
const APPENDS = ['appendWithViews', 'appendToStreams'] as const;

/**
 * Holds the next append of a service running in this process that carries an event of `type`,
 * before it reaches the store, until `release()`: its unit is decided and not yet written, for as
 * long as the test needs, whatever the machine's speed. `appending` resolves once it is held;
 * `release()` lets it go on (and undoes the hold if none came).
 */
export function holdNextAppendOf(api: Pick<TestApi, 'get'>, type: string): { appending: Promise<void>; release: () => void } {
  const store = api.get(EventStore) as unknown as Record<(typeof APPENDS)[number], (appends: unknown, ...rest: unknown[]) => unknown>;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const appending = new Promise<void>((resolve) => (held = resolve));
  const carries = (appends: unknown) =>
    (appends as Array<{ events: Array<{ type: string }> }>).some((append) => append.events.some((event) => event.type === type));
  const spies: jest.SpyInstance[] = [];
  const restore = () => spies.forEach((spy) => spy.mockRestore());
  for (const method of APPENDS) {
    const original = store[method].bind(store);
    spies.push(
      jest.spyOn(store, method).mockImplementation(async (appends: unknown, ...rest: unknown[]) => {
        if (carries(appends)) {
          // The store's own methods again for every later append (and this one's inner calls).
          restore();
          held();
          await released;
        }
        return original(appends, ...rest);
      }),
    );
  }
  return {
    appending,
    release: () => {
      restore();
      release();
    },
  };
}

/**
 * Holds the next read of `streamId` (a call's first look at what it then writes) until `release()`:
 * the call is under way and has decided nothing yet. `reading` resolves once it is held.
 */
export function holdNextReadOf(api: Pick<TestApi, 'get'>, streamId: string): { reading: Promise<void>; release: () => void } {
  const store = api.get(EventStore);
  const read = store.readStream.bind(store);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const reading = new Promise<void>((resolve) => (held = resolve));
  const spy = jest.spyOn(store, 'readStream').mockImplementation(async (id, ...rest) => {
    if (id === streamId) {
      spy.mockRestore();
      held();
      await released;
    }
    return read(id, ...rest);
  });
  return {
    reading,
    release: () => {
      spy.mockRestore();
      release();
    },
  };
}
