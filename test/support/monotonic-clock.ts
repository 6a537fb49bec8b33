/**
 * This process's monotonic clock (`performance.now()`), moved on by hand: what an in-process app
 * ages in real time (the key verifier's cache of keys found) passes without the test waiting for
 * it. It never goes back while installed; `restore` puts the real clock back (once the app is closed).
 */
export function movableMonotonicClock(): { advance(ms: number): void; restore(): void } {
  let ahead = 0;
  const real = performance.now.bind(performance);
  const moved = jest.spyOn(performance, 'now').mockImplementation(() => real() + ahead);
  return {
    advance: (ms) => void (ahead += ms),
    restore: () => moved.mockRestore(),
  };
}
