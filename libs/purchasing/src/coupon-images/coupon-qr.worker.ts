/**
 * Renders coupon QR images for {@link CouponQr} on a thread of its own (loaded by path: imports
 * packages and relative modules only). Each message is a list of `{ id, code }`; the answer lists
 * `{ id, png }` (or `{ id, error }`) in one message and hands the bytes over.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { qrPng } from './qr-png';

// Drawing is CPU work the answer can wait a moment for; the event loop serving requests comes first
// (Linux only: there nice is per thread, elsewhere it would slow the whole process). Threads made
// from here would inherit it: no async fs, crypto or zlib calls in this thread (libuv's shared pool).
if (process.platform === 'linux') {
  try {
    setPriority(10);
  } catch {
    // not allowed here: run at the usual priority
  }
}

export interface QrDraw {
  id: number;
  code: string;
}

export interface QrDrawn {
  id: number;
  png?: Uint8Array;
  error?: string;
}

const port = parentPort!;
port.on('message', (draws: QrDraw[]) => {
  const drawn: QrDrawn[] = [];
  const bytes: ArrayBuffer[] = [];
  for (const { id, code } of draws) {
    try {
      const png = qrPng(code);
      const copy = new Uint8Array(png.buffer, png.byteOffset, png.byteLength).slice();
      drawn.push({ id, png: copy });
      bytes.push(copy.buffer);
    } catch (error) {
      drawn.push({ id, error: (error as Error).message });
    }
  }
  port.postMessage(drawn, bytes);
});
