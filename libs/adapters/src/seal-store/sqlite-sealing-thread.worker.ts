/**
 * The worker side of {@link SqliteSealingThread}: connections of its own to the event log's file
 * (read) and the seals' file (written), and for each message one checkpoint of the events after the
 * last: their hashes taken over the JSON text as stored, no parsing. Relative imports only: it is
 * loaded by path.
 */
import Database from 'better-sqlite3';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { checkpointSigningKey, eventHashOfText } from '../../../kernel/src/history-seal/seal';
import { HashedEvent, MAX_CHECKPOINT_EVENTS, sealRun } from '../../../kernel/src/history-seal/seal-run';
import { openDurableDatabase } from '../sqlite/open-durable-database';
import { HELPER_THREAD_NICE } from '../sqlite/write-thread.protocol';
import { toCheckpoint } from './seal-rows';
import { prepareSealStatements } from './sqlite-seal-schema';

export interface SealingThreadData {
  eventsFile: string;
  sealsFile: string;
  secret: Uint8Array;
  /** Its events' positions' width (the log's positions are zero-padded text). */
  positionWidth: number;
}

/** A request: seal the next checkpoint, dated `sealedAt`. */
export interface SealRequest {
  id: number;
  sealedAt: string;
}

/** Its answer: the checkpoint's number (0 when nothing was new), or why it failed (`raced`: another sealer wrote that number). */
export type SealAnswer = { id: number; written: number } | { id: number; error: string; raced?: number };

interface EventRow {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

const { eventsFile, sealsFile, secret, positionWidth } = workerData as SealingThreadData;
// Sealing may lag a burst of requests: it must not take the CPU from the event loop.
if (process.platform === 'linux') {
  try {
    setPriority(HELPER_THREAD_NICE);
  } catch {
    // not allowed here: run at the usual priority
  }
}

const { privateKey } = checkpointSigningKey(Buffer.from(secret));
const log = new Database(eventsFile, { fileMustExist: true, timeout: 2000 });
const readAfter = log.prepare<[number, number], EventRow>('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?');
const seals = prepareSealStatements(openDurableDatabase(sealsFile));
const position = (n: number) => String(n).padStart(positionWidth, '0');

function sealNext(sealedAt: string): number | { raced: number } {
  const lastRow = seals.last.get();
  const last = lastRow ? toCheckpoint(lastRow) : null;
  const rows = readAfter.all(last ? Number(last.toPosition) : 0, MAX_CHECKPOINT_EVENTS);
  if (rows.length === 0) return 0;
  const heads = new Map<string, Buffer>();
  for (const streamId of new Set(rows.map((r) => r.stream_id))) {
    const head = seals.streamLink.get(streamId);
    if (head) heads.set(streamId, Buffer.from(head.link, 'hex'));
  }
  const events: HashedEvent[] = rows.map((r) => ({
    position: position(r.position),
    streamId: r.stream_id,
    revision: r.revision,
    hash: eventHashOfText({ streamId: r.stream_id, revision: r.revision, id: r.id, type: r.type, data: r.data, metadata: r.metadata }),
  }));
  const { checkpoint, seals: sealed } = sealRun(last, events, heads, sealedAt, privateKey);
  return seals.write(checkpoint, sealed) ? checkpoint.number : { raced: checkpoint.number };
}

const port = parentPort!;
port.on('message', ({ id, sealedAt }: SealRequest) => {
  try {
    const result = sealNext(sealedAt);
    port.postMessage(
      typeof result === 'number'
        ? { id, written: result }
        : // eslint-disable-next-line no-restricted-syntax -- a checkpoint id of ours, never answered
          { id, error: `checkpoint ${result.raced} was written by another sealer`, raced: result.raced },
    );
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
