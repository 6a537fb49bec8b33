import type { Worker } from 'node:worker_threads';
import { CouponQr } from './coupon-qr';
import { qrPng } from './qr-png';

describe('CouponQr', () => {
  let qr: CouponQr;
  beforeEach(() => (qr = new CouponQr()));
  afterEach(() => qr.onModuleDestroy());

  /** Counts the messages posted to the drawing thread from now on. */
  function countPosts(): () => number {
    let posts = 0;
    const start = (qr as unknown as { start: () => Worker }).start.bind(qr);
    (qr as unknown as { start: () => Worker }).start = () => {
      const worker = start();
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (message: unknown, transfer?: readonly import('node:worker_threads').TransferListItem[]) => {
        posts++;
        post(message, transfer);
      };
      return worker;
    };
    return () => posts;
  }

  it('draws each code asked for in one turn of the loop, sending them to its thread in one message', async () => {
    const posts = countPosts();
    const codes = Array.from({ length: 12 }, (_, i) => `CODE${i}X7Q`);
    const images = await Promise.all(codes.map((code) => qr.png(code)));
    images.forEach((image, i) => expect(image.equals(qrPng(codes[i]))).toBe(true));
    expect(posts()).toBe(1);
  });

  it('draws a code once, however often and whenever it is asked for', async () => {
    const posts = countPosts();
    const [first, again] = await Promise.all([qr.png('SAME1'), qr.png('SAME1')]);
    expect(first).toBe(again);
    expect(await qr.png('SAME1')).toBe(first);
    expect(await qr.base64('SAME1')).toBe(first.toString('base64'));
    expect(posts()).toBe(1);
  });

  it('draws the codes asked for in later turns in later messages', async () => {
    const posts = countPosts();
    const a = await qr.png('LATER1');
    const b = await qr.png('LATER2');
    expect(a.equals(qrPng('LATER1')) && b.equals(qrPng('LATER2'))).toBe(true);
    expect(posts()).toBe(2);
  });

  it('fails only the image that cannot be drawn, and answers the others of its message', async () => {
    const posts = countPosts();
    const tooLong = 'X'.repeat(5000); // more than a QR symbol holds
    const [before, failed, after] = await Promise.allSettled([qr.png('FINE1'), qr.png(tooLong), qr.png('FINE2')]);
    expect(before.status === 'fulfilled' && before.value.equals(qrPng('FINE1'))).toBe(true);
    expect(failed.status === 'rejected' && (failed.reason as Error).message).toMatch(/^QR image not drawn: /);
    expect(after.status === 'fulfilled' && after.value.equals(qrPng('FINE2'))).toBe(true);
    expect(posts()).toBe(1);
  });

  it('gives images that own their memory whole (handed over by the thread without a copy)', async () => {
    const image = await qr.png('OWNED1');
    expect(image.byteOffset).toBe(0);
    expect(image.buffer.byteLength).toBe(image.length);
  });
});
