import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PRELOAD = join(__dirname, 'movable-clock.preload.js');

/**
 * The time of the service processes a test starts with {@link MovableClock.env}: moved forward by
 * the test (`advance`) instead of waited for, and put back (`reset`). See movable-clock.preload.js.
 */
export class MovableClock {
  private offsetMs = 0;
  private readonly file: string;

  constructor(folder: string) {
    this.file = join(folder, 'movable-clock-offset');
    this.write();
  }

  /** The environment that preloads the clock into a process and names its offset file. */
  env(): Record<string, string> {
    const options = [process.env.NODE_OPTIONS, `--require ${PRELOAD}`].filter(Boolean).join(' ');
    return { NODE_OPTIONS: options, MOVABLE_CLOCK_FILE: this.file };
  }

  /** Moves those processes' time forward by `ms` (they read it within 50 ms). */
  advance(ms: number): void {
    this.offsetMs += ms;
    this.write();
  }

  /** Puts their time back to the wall clock. */
  reset(): void {
    this.offsetMs = 0;
    this.write();
  }

  /** Replaces the file whole, so that a process never reads half of it. */
  private write(): void {
    writeFileSync(`${this.file}.next`, String(this.offsetMs));
    renameSync(`${this.file}.next`, this.file);
  }
}
