import { addressKey } from '@deals/wire';

/** libuv's thread pool, where scrypt runs: `UV_THREADPOOL_SIZE` threads, 4 unless set. */
const poolThreads = () => Number(process.env.UV_THREADPOOL_SIZE) || 4;

/**
 * The partner site's password hashes (scrypt, on libuv's thread pool), at most `slots` at once:
 * half the pool by default, so that card fingerprints, files and DNS always find threads free.
 * Waiting hashes are taken in turn by client address (an IPv6 one by its /64), so that the hashes
 * one address has queued delay another address's by one each at most, not all of them. The
 * throttle refuses before this is reached: a refused attempt never hashes.
 */
export class PasswordHashing {
  private running = 0;
  /** Waiting hashes by address; the map's order is the turn (an address served goes to the end). */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(readonly slots = Math.max(1, Math.floor(poolThreads() / 2))) {}

  /** Runs `hash` (a scrypt of `address`'s attempt) once a slot is free and it is that address's turn. */
  async run<T>(address: string, hash: () => Promise<T>): Promise<T> {
    await this.enter(addressKey(address));
    try {
      return await hash();
    } finally {
      this.leave();
    }
  }

  private enter(key: string): Promise<void> {
    if (this.running < this.slots) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(key);
      if (queue) queue.push(resolve);
      else this.waiting.set(key, [resolve]);
    });
  }

  /** Hands the slot to the first address in turn, or frees it. */
  private leave(): void {
    const first = this.waiting.entries().next();
    if (first.done) {
      this.running--;
      return;
    }
    const [key, queue] = first.value;
    const next = queue.shift()!;
    this.waiting.delete(key);
    if (queue.length) this.waiting.set(key, queue);
    next();
  }
}
