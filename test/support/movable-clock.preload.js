/**
 * Preloaded (`--require`) into a service process a test starts, so that the test can move that
 * process's time forward instead of waiting for a timer: `Date.now()` and `new Date()` answer the
 * wall clock plus the milliseconds written in the file `MOVABLE_CLOCK_FILE` names (read again at most
 * every 50 ms; a missing or empty file is no offset). Timers and `performance.now()` are not moved:
 * what a moved process does early is what compares dates, such as a BullMQ worker promoting its
 * delayed jobs and the deciders' clock.
 */
const { readFileSync } = require('node:fs');

const file = process.env.MOVABLE_CLOCK_FILE;
if (file) {
  const RealDate = Date;
  const realNow = RealDate.now;
  let offset = 0;
  let readAt = -Infinity;
  // READ_AGAIN_MS in movable-clock.ts: a test's advance resolves once that has passed.
  const now = () => {
    const wall = realNow();
    if (wall - readAt >= 50) {
      readAt = wall;
      try {
        offset = Number(readFileSync(file, 'utf8').trim()) || 0;
      } catch {
        offset = 0;
      }
    }
    return wall + offset;
  };
  function MovedDate(...args) {
    if (!new.target) return new RealDate(now()).toString();
    // Made for `new.target`, so that a subclass of Date gets instances of its own.
    return Reflect.construct(RealDate, args.length === 0 ? [now()] : args, new.target);
  }
  MovedDate.prototype = RealDate.prototype;
  MovedDate.now = now;
  MovedDate.parse = RealDate.parse;
  MovedDate.UTC = RealDate.UTC;
  globalThis.Date = MovedDate;
}
