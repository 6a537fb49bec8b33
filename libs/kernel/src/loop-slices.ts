import { setImmediate as nextTurn } from 'node:timers/promises';

/** Lets the event loop run what waits (another request's bytes, a timer, an answer) before the caller goes on. */
export const yieldToLoop = (): Promise<void> => nextTurn();

/**
 * Work on one large request cut into slices with a turn of the event loop between them: the work
 * counts what it has done (`spend`: items, bytes) and yields once a slice's worth is done, so that
 * every other request waits behind a slice, not behind the whole (a bulk job's 10,000 items).
 */
export class LoopSlices {
  private spent = 0;

  constructor(private readonly perSlice: number) {}

  /** Counts `units` of work done; once the slice holds `perSlice` of them, yields to the loop and starts the next. */
  async spend(units: number): Promise<void> {
    this.spent += units;
    if (this.spent < this.perSlice) return;
    this.spent = 0;
    await yieldToLoop();
  }
}

/** `work` on each item in order, with a turn of the loop after each `perSlice` items. */
export async function eachInSlices<T>(items: readonly T[], perSlice: number, work: (item: T, index: number) => void): Promise<void> {
  const slices = new LoopSlices(perSlice);
  for (let index = 0; index < items.length; index++) {
    work(items[index], index);
    await slices.spend(1);
  }
}
