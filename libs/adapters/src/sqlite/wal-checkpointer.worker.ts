/**
 * The worker side of {@link WalCheckpointer}: a connection of its own to each watched file, and
 * every `intervalMs` a PASSIVE checkpoint of each (it waits for no reader or writer). A file that
 * cannot be opened, or whose checkpoints keep failing, is handed back to its writer. Imports
 * nothing but relative modules and better-sqlite3: it is loaded by path.
 */
import Database from 'better-sqlite3';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { HELPER_THREAD_NICE } from './write-thread.protocol';

const { intervalMs } = workerData as { intervalMs: number };
/** Checkpoints of one file that may fail in a row (busy: another process's checkpoint) before it is handed back. */
const FAILURES_TO_HAND_BACK = 10;
// As the write threads: this one mostly syncs files, and must not take the CPU from the event loop.
if (process.platform === 'linux') {
  try {
    setPriority(HELPER_THREAD_NICE);
  } catch {
    // not allowed here: run at the usual priority
  }
}

const port = parentPort!;
const watched = new Map<string, { db: Database.Database; failures: number }>();

function handBack(file: string, error: unknown): void {
  watched.get(file)?.db.close();
  watched.delete(file);
  port.postMessage({ handBack: file, error: error instanceof Error ? error.message : String(error) });
}

port.on('message', ({ watch, unwatch, close, ping }: { watch?: string; unwatch?: string; close?: true; ping?: number }) => {
  if (ping !== undefined) port.postMessage({ pong: ping });
  if (watch && !watched.has(watch)) {
    try {
      // Never creates a file: a generation removed before this message came stays removed. No busy
      // wait either: a checkpoint that finds the file busy is simply tried again next time.
      const db = new Database(watch, { fileMustExist: true, timeout: 0 });
      // NORMAL makes a checkpoint sync the database file before the WAL may be reused.
      db.pragma('synchronous = NORMAL');
      watched.set(watch, { db, failures: 0 });
    } catch (error) {
      handBack(watch, error);
    }
  }
  if (unwatch) {
    watched.get(unwatch)?.db.close();
    watched.delete(unwatch);
  }
  if (close) {
    clearInterval(timer);
    for (const { db } of watched.values()) db.close();
    watched.clear();
    port.close();
  }
});

const timer = setInterval(() => {
  for (const [file, entry] of watched) {
    try {
      entry.db.pragma('wal_checkpoint(PASSIVE)');
      entry.failures = 0;
    } catch (error) {
      if (++entry.failures >= FAILURES_TO_HAND_BACK) handBack(file, error);
    }
  }
}, intervalMs);
