import type { LogPosition } from './ports/event-store.port';

/** Answers waiting for a view to apply the log up to a position: true once it has, false after their time. */
export class PositionWaiters {
  private waiters: Array<{ position: LogPosition; resolve: () => void }> = [];

  /** Resolves true at once when `applied` is at `position` already, else once {@link reached} says so, or false after `timeoutMs`. */
  wait(applied: LogPosition | null, position: LogPosition, timeoutMs: number): Promise<boolean> {
    if (applied !== null && applied >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { position, resolve: () => resolve(true) };
      this.waiters.push(waiter);
      setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          resolve(false);
        }
      }, timeoutMs).unref();
    });
  }

  /** The view has applied the log up to `applied`: the waits it satisfies end. */
  reached(applied: LogPosition | null): void {
    if (applied === null) return;
    const ready = this.waiters.filter((w) => w.position <= applied);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > applied);
    for (const w of ready) w.resolve();
  }
}
