/**
 * Renders coupon QR images for {@link CouponQr} on a thread of its own (loaded by path: imports
 * packages and relative modules only). Each message lists the images to draw, flat:
 * `[id, code, id, code, …]`; the answer lists them in one message, `[id, png or error text, …]`,
 * and hands the images' memory over (flat arrays cross threads far more cheaply than objects).
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

/** `[id, code, id, code, …]`. */
export type QrDraws = Array<number | string>;
/** `[id, png or the error's message, …]`. */
export type QrDrawn = Array<number | Uint8Array | string>;

const port = parentPort!;
port.on('message', (draws: QrDraws) => {
  const drawn: QrDrawn = [];
  const bytes: ArrayBuffer[] = [];
  for (let i = 0; i < draws.length; i += 2) {
    const id = draws[i] as number;
    try {
      // An image of its own memory (see qrPng): handed over as it is.
      const png = qrPng(draws[i + 1] as string);
      drawn.push(id, png);
      bytes.push(png.buffer as ArrayBuffer);
    } catch (error) {
      drawn.push(id, (error as Error).message);
    }
  }
  port.postMessage(drawn, bytes);
});
