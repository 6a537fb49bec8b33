/**
 * Reads until `check` holds, `pauseMs` apart, and gives the last read back after `ceilingMs` (a
 * ceiling that means "hung", never "slow") for the caller's assertion to fail on. For reads that
 * are requests to a running app (which answers them beside the work awaited); `eventually` reads
 * back to back.
 */
export async function polled<T>(read: () => Promise<T>, check: (value: T) => boolean, ceilingMs = 20_000, pauseMs = 20): Promise<T> {
  for (const deadline = Date.now() + ceilingMs; ;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}
