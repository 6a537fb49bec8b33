/**
 * A set of document slots (small dense integers), one bit each. Sets of different lengths combine
 * as if the shorter one were padded with zeros.
 */
export class Bitset {
  words: Uint32Array;

  constructor(size = 0) {
    this.words = new Uint32Array((size + 31) >>> 5);
  }

  add(slot: number): void {
    const w = slot >>> 5;
    if (w >= this.words.length) this.grow(w + 1);
    this.words[w] |= 1 << (slot & 31);
  }

  delete(slot: number): void {
    const w = slot >>> 5;
    if (w < this.words.length) this.words[w] &= ~(1 << (slot & 31));
  }

  has(slot: number): boolean {
    const w = slot >>> 5;
    return w < this.words.length && (this.words[w] & (1 << (slot & 31))) !== 0;
  }

  addAll(slots: Iterable<number>): this {
    for (const slot of slots) this.add(slot);
    return this;
  }

  /** Adds `slots[lo..hi-1]` (a sorted index's entries, say). */
  addRange(slots: readonly number[], lo: number, hi: number): this {
    const words = this.words;
    for (let i = lo; i < hi; i++) {
      const slot = slots[i];
      words[slot >>> 5] |= 1 << (slot & 31);
    }
    return this;
  }

  /** Drops `slots[lo..hi-1]`. */
  removeRange(slots: readonly number[], lo: number, hi: number): this {
    const words = this.words;
    for (let i = lo; i < hi; i++) {
      const slot = slots[i];
      words[slot >>> 5] &= ~(1 << (slot & 31));
    }
    return this;
  }

  /** Becomes slots `0..size-1`. */
  fill(size: number): this {
    const words = this.words;
    const full = size >>> 5;
    words.fill(0xffffffff, 0, full);
    words.fill(0, full);
    if (size & 31) words[full] = (1 << (size & 31)) - 1;
    return this;
  }

  /** Keeps only the slots also in `other`. */
  and(other: Bitset): this {
    const a = this.words;
    const b = other.words;
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) a[i] &= b[i];
    a.fill(0, n);
    return this;
  }

  /** Adds the slots of `other` (up to this set's length). */
  or(other: Bitset): this {
    const a = this.words;
    const b = other.words;
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) a[i] |= b[i];
    return this;
  }

  /** Drops the slots in `other`. */
  andNot(other: Bitset): this {
    const a = this.words;
    const b = other.words;
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) a[i] &= ~b[i];
    return this;
  }

  count(): number {
    const words = this.words;
    let n = 0;
    for (let i = 0; i < words.length; i++) {
      let word = words[i];
      word -= (word >>> 1) & 0x55555555;
      word = (word & 0x33333333) + ((word >>> 2) & 0x33333333);
      n += Math.imul((word + (word >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    return n;
  }

  /** Calls `visit` with each slot in ascending order until it returns false. */
  each(visit: (slot: number) => boolean | void): void {
    const words = this.words;
    for (let w = 0; w < words.length; w++) {
      let word = words[w];
      while (word !== 0) {
        const low = word & -word;
        if (visit((w << 5) + 31 - Math.clz32(low)) === false) return;
        word ^= low;
      }
    }
  }

  private grow(length: number): void {
    const words = new Uint32Array(Math.max(length, this.words.length * 2));
    words.set(this.words);
    this.words = words;
  }
}

/**
 * Bitsets a query works with, reused from one query to the next: each off-heap buffer allocated
 * per query adds to V8's external memory, and with a large heap the collections that pressure
 * triggers cost far more than the query. `take` hands out cleared sets; `release` returns all of
 * them, so it must run once the query (which is synchronous) is done with them.
 */
export class BitsetPool {
  private readonly free: Bitset[] = [];
  private readonly taken: Bitset[] = [];

  /** A cleared set with room for `size` slots. */
  take(size: number): Bitset {
    let bits = this.free.pop();
    const words = (size + 31) >>> 5;
    if (!bits || bits.words.length < words) bits = new Bitset(size);
    else bits.words.fill(0);
    this.taken.push(bits);
    return bits;
  }

  release(): void {
    for (const bits of this.taken) this.free.push(bits);
    this.taken.length = 0;
  }
}
