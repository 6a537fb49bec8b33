/**
 * The worker side of {@link ViewWriteThread}: a connection of its own to each file it writes, and
 * one transaction per request (see `prepareDocumentWrites`). Its commits checkpoint the files' WAL
 * here too, off the event loop. Imports nothing but relative modules and better-sqlite3: it is
 * loaded by path.
 */
import Database from 'better-sqlite3';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { HELPER_THREAD_NICE } from '../../sqlite/write-thread.protocol';
import { DocumentKeys } from './document-keys';
import { DocumentWrites, prepareDocumentWrites } from './document-writes';
import { ANSWERED, GONE, LEAVE, ViewWriteReply, ViewWriteRequest, ViewWriteThreadData } from './view-write-thread.protocol';

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

const { port, control } = workerData as ViewWriteThreadData;
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
  // Asked to leave: what was sent before is not done (its senders were told it was not answered).
  if (Atomics.load(control, LEAVE) === 1) return leave();
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
  Atomics.store(control, ANSWERED, seq);
  Atomics.notify(control, ANSWERED);
});
// The loop closed its side: no request comes any more.
port.on('close', leave);

/**
 * Ends the thread by itself, between requests: it is never stopped from outside while it may be
 * inside a statement (one failing in a thread being terminated cannot make its error, and the
 * whole process aborts). Its files closed, it tells the loop it writes nothing more, and ends once
 * its port is closed (nothing else keeps it).
 */
function leave(): void {
  for (const { db } of files.values()) {
    try {
      db.close();
    } catch {
      // closed with the thread
    }
  }
  files.clear();
  Atomics.store(control, GONE, 1);
  Atomics.notify(control, GONE);
  port.close();
}
