/**
 * The worker side of {@link ViewWriteThread}: a connection of its own to each file it writes, and
 * one transaction per request (see `prepareDocumentWrites`). Its commits checkpoint the files' WAL
 * here too, off the event loop. Imports nothing but relative modules and better-sqlite3: it is
 * loaded by path.
 */
import Database from 'better-sqlite3';
import { setPriority } from 'node:os';
import { MessagePort, workerData } from 'node:worker_threads';
import { HELPER_THREAD_NICE } from '../../sqlite/write-thread.protocol';
import { DocumentKeys } from './document-keys';
import { DocumentWrites, prepareDocumentWrites } from './document-writes';

export interface ViewWriteThreadData {
  port: MessagePort;
  /** Raised to each request's number once it is answered. */
  answered: Int32Array;
}

export interface ViewWriteRequest {
  seq: number;
  file?: string;
  fields?: string[];
  writes?: DocumentWrites;
  /** Close the connection to this file. */
  release?: string;
}

export interface ViewWriteReply {
  seq: number;
  error: string | null;
}

/** Milliseconds a write waits for another process's lock on a file. */
const BUSY_TIMEOUT_MS = 2000;

// As the other helper threads: below the event loop's priority, so that it does not take the CPU
// from the thread serving requests.
if (process.platform === 'linux') {
  try {
    setPriority(HELPER_THREAD_NICE);
  } catch {
    // not allowed here: run at the usual priority
  }
}

const { port, answered } = workerData as ViewWriteThreadData;
const files = new Map<string, { db: Database.Database; keyed: string; write: (writes: DocumentWrites) => void }>();

function writerOf(file: string, fields: readonly string[]) {
  let writer = files.get(file);
  const keyed = JSON.stringify(fields);
  if (!writer) {
    // Never creates a file: the generation made it, with its tables, before its first write.
    const db = new Database(file, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    db.pragma('synchronous = NORMAL');
    // A document replaced or deleted leaves no copy behind, in its page or a freed one (a user's erased profile among them).
    db.pragma('secure_delete = ON');
    writer = { db, keyed, write: prepareDocumentWrites(db, new DocumentKeys(fields)) };
    files.set(file, writer);
  } else if (writer.keyed !== keyed) {
    // The file was keyed again for other fields (a generation opened on it with other indexes).
    writer.keyed = keyed;
    writer.write = prepareDocumentWrites(writer.db, new DocumentKeys(fields));
  }
  return writer;
}

port.on('message', ({ seq, file, fields, writes, release }: ViewWriteRequest) => {
  let error: string | null = null;
  try {
    if (file && fields && writes) writerOf(file, fields).write(writes);
    if (release) {
      files.get(release)?.db.close();
      files.delete(release);
    }
  } catch (failure) {
    error = failure instanceof Error ? failure.message : String(failure);
  }
  port.postMessage({ seq, error } satisfies ViewWriteReply);
  Atomics.store(answered, 0, seq);
  Atomics.notify(answered, 0);
});
