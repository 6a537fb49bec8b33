import type { LogPosition } from './ports/event-store.port';

/**
 * Answers waiting for a view to apply the log up to a position: true once it has, false after
 * their time, null when the view stops being kept here ({@link abandon}).
 */
export class PositionWaiters {
  private waiters: Array<{ position: LogPosition; settle: (reached: boolean | null) => void }> = [];

  /** Resolves true at once when `applied` is at `position` already, else once {@link reached} says so, or false after `timeoutMs`. */
  wait(applied: LogPosition | null, position: LogPosition, timeoutMs: number): Promise<boolean | null> {
    if (applied !== null && applied >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          resolve(false);
        }
      }, timeoutMs).unref();
      const waiter = {
        position,
        settle: (reached: boolean | null) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** The view has applied the log up to `applied`: the waits it satisfies end. */
  reached(applied: LogPosition | null): void {
    if (applied === null) return;
    const ready = this.waiters.filter((w) => w.position <= applied);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > applied);
    for (const w of ready) w.settle(true);
  }

  /** The view is no longer kept here: every wait ends with null (the waiter looks elsewhere). */
  abandon(): void {
    const all = this.waiters;
    this.waiters = [];
    for (const w of all) w.settle(null);
  }
}
