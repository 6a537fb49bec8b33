/**
 * At most `slots` pieces of work at once; waiting work is taken in turn by key (a key served goes
 * to the back), so that what one key has queued delays another key's by one each at most.
 */
export class FairSlots {
  private running = 0;
  /** Waiting work by key; the map's order is the turn. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(readonly slots: number) {
    if (!(slots >= 1)) throw new RangeError(`FairSlots needs at least one slot, not ${slots}`);
  }

  /** Runs `work` once a slot is free and it is `key`'s turn. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    await this.enter(key);
    try {
      return await work();
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

  /** Hands the slot to the first key in turn, or frees it. */
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

/** libuv's thread pool, where scrypt runs: `UV_THREADPOOL_SIZE` threads, 4 unless set. */
const poolThreads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const peopleSlots = Math.max(1, Math.floor(poolThreads / 2));

/**
 * The process's slow hashes (scrypt, on libuv's thread pool) in two lanes that together never ask
 * for more threads than the pool has: `people`, the passwords a person types on the partner site
 * (half the pool, in turn by address), and `requests`, what partners' calls hash (users'
 * passwords, card fingerprints; the rest, in turn by partner). A flood of either waits in its own
 * lane: a member's sign-in never queues behind a partner's users, nor the reverse, and files and
 * DNS keep a thread when the pool is larger than the lanes.
 */
export const slowHashes = {
  people: new FairSlots(peopleSlots),
  requests: new FairSlots(Math.max(1, poolThreads - peopleSlots)),
};
