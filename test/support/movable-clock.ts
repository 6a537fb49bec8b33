import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PRELOAD = join(__dirname, 'movable-clock.preload.js');
/** How long a process keeps the offset it read before it reads the file again (the preload's own). */
const READ_AGAIN_MS = 50;

/**
 * The time of the service processes a test starts with {@link MovableClock.env}: moved forward by
 * the test (`advance`) instead of waited for, and put back (`reset`). See movable-clock.preload.js.
 */
export class MovableClock {
  private offsetMs = 0;
  private readonly file: string;

  constructor(folder: string) {
    this.file = join(folder, 'movable-clock-offset');
    this.save();
  }

  /** The environment that preloads the clock into a process and names its offset file. */
  env(): Record<string, string> {
    const options = [process.env.NODE_OPTIONS, `--require ${PRELOAD}`].filter(Boolean).join(' ');
    return { NODE_OPTIONS: options, MOVABLE_CLOCK_FILE: this.file };
  }

  /** Moves those processes' time forward by `ms`; resolves once every one of them reads it (see {@link read}). */
  advance(ms: number): Promise<void> {
    this.offsetMs += ms;
    this.save();
    return read();
  }

  /** Puts their time back to the wall clock; resolves once every one of them reads it. */
  reset(): Promise<void> {
    this.offsetMs = 0;
    this.save();
    return read();
  }

  /** Replaces the file whole, so that a process never reads half of it. */
  private save(): void {
    writeFileSync(`${this.file}.next`, String(this.offsetMs));
    renameSync(`${this.file}.next`, this.file);
  }
}

/**
 * Resolves once every process reads the offset just saved: each keeps the one it read for
 * {@link READ_AGAIN_MS} (movable-clock.preload.js), so past that every time it asks for is the new
 * one (a BullMQ worker woken then looks for due jobs at the moved time, never at the time before).
 */
function read(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, READ_AGAIN_MS + 1));
}
