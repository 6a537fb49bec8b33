import type { MessagePort } from 'node:worker_threads';
import type { DocumentWrites } from './document-writes';

// Slots of the Int32Array a view write thread shares with the event loop, read by the loop while
// it blocks for an answer (when no message or event reaches it).
/** The last request the thread has answered (raised after the answer is posted). */
export const ANSWERED = 0;
/** Set by the loop: run no further request, close every file and end (between requests). */
export const LEAVE = 1;
/** Set by the thread once it has closed its files: it writes nothing more. */
export const GONE = 2;
export const CONTROL_SLOTS = 3;

export interface ViewWriteThreadData {
  port: MessagePort;
  /** The slots above. */
  control: Int32Array;
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
