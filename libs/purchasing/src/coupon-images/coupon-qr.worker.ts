/**
 * Renders coupon QR images for {@link CouponQr} on a thread of its own (loaded by path: imports
 * packages and relative modules only). Each message is `{ id, code }`; the answer `{ id, png }`
 * hands the bytes over.
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

const port = parentPort!;
port.on('message', ({ id, code }: { id: number; code: string }) => {
  try {
    const png = qrPng(code);
    const bytes = new Uint8Array(png.buffer, png.byteOffset, png.byteLength).slice();
    port.postMessage({ id, png: bytes }, [bytes.buffer]);
  } catch (error) {
    port.postMessage({ id, error: (error as Error).message });
  }
});
