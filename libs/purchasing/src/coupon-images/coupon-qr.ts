import { workerModulePath } from '@deals/kernel';
import { Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { QrDrawn, QrDraws } from './coupon-qr.worker';

const CAPACITY = 10_000;

/**
 * QR images of coupons' redemption codes (PNG, from `qrPng`), kept since a coupon's code never
 * changes. They are drawn on a worker thread: every purchase answers with its coupons' images, and
 * drawing them on the event loop took a tenth of its time under load.
 *
 * The images asked for while the loop runs one piece of code go to the thread in one message, and
 * come back in one. Posting to a thread that sleeps costs the event loop ~20 µs (the wake-up), ten
 * times a post to a busy one; the purchases that one processor answer lets go ask together.
 */
@Injectable()
export class CouponQr implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly images = new Map<string, Buffer>();
  private readonly drawing = new Map<string, Promise<Buffer>>();
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, { resolve: (png: Buffer) => void; reject: (error: Error) => void }>();
  /** Asked for and not yet sent to the thread. */
  private unsent: QrDraws = [];
  private nextId = 0;

  png(code: string): Promise<Buffer> {
    const image = this.images.get(code);
    if (image) return Promise.resolve(image);
    let drawn = this.drawing.get(code);
    if (!drawn) {
      drawn = this.draw(code)
        .then((png) => {
          if (this.images.size >= CAPACITY) this.images.clear();
          this.images.set(code, png);
          return png;
        })
        .finally(() => this.drawing.delete(code));
      this.drawing.set(code, drawn);
    }
    return drawn;
  }

  async base64(code: string): Promise<string> {
    return (await this.png(code)).toString('base64');
  }

  /**
   * The thread is started with the application, not by the first purchase: loading its modules
   * takes a few hundred milliseconds, which that purchase's answer would wait for.
   */
  onApplicationBootstrap(): void {
    this.worker ??= this.start();
  }

  async onModuleDestroy(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private draw(code: string): Promise<Buffer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.unsent.push(id, code);
      if (this.unsent.length === 2) queueMicrotask(() => this.send());
    });
  }

  private send(): void {
    const draws = this.unsent;
    this.unsent = [];
    const worker = this.worker ?? this.start();
    worker.ref();
    worker.postMessage(draws);
  }

  private start(): Worker {
    const worker = new Worker(workerModulePath(join(__dirname, 'coupon-qr.worker')));
    worker.on('message', (drawn: QrDrawn) => {
      for (let i = 0; i < drawn.length; i += 2) {
        const id = drawn[i] as number;
        const png = drawn[i + 1];
        const waiting = this.waiting.get(id);
        this.waiting.delete(id);
        if (png instanceof Uint8Array) waiting?.resolve(Buffer.from(png.buffer, png.byteOffset, png.byteLength));
        else waiting?.reject(new Error(`QR image not drawn: ${png as string}`));
      }
      if (this.waiting.size === 0) worker.unref();
    });
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const { reject } of this.waiting.values()) reject(error);
      this.waiting.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the QR thread stopped (exit code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
