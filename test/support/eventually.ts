/**
 * Reads until `check` holds, asking again as the work it waits on goes on (each read after the
 * loop's pending work, and `everyMs` after the last when reading costs what it waits on: a query,
 * a call to the service); gives the last read back when it never does within a ceiling that means
 * "hung", never "slow", for the caller's assertion to fail on.
 */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ceilingMs = 30_000, everyMs = 0): Promise<T> {
  const deadline = Date.now() + ceilingMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => (everyMs > 0 ? setTimeout(resolve, everyMs) : setImmediate(resolve)));
  }
}
