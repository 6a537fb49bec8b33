/**
 * A map that keeps about the `capacity` most recently set keys, in two generations: keys are set
 * in the young one, and when it is half full it becomes the old one (the old one before it is
 * dropped). A get looks in both. Every operation is O(1).
 *
 * A `Map` used as an LRU (delete a key and set it again to move it to the back, delete
 * `keys().next()` when full) slows down as it is used: V8 leaves a hole for every deleted entry
 * until the table is rebuilt, and `keys().next()` walks over the holes at the front. At 10,000
 * streams that made `handleCommand`'s cache three times costlier after ~35,000 purchases.
 */
export class RecentMap<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();

  constructor(private readonly capacity: number) {
    if (!(capacity >= 2)) throw new RangeError(`a RecentMap keeps at least 2 keys, not ${capacity}`);
  }

  get(key: K): V | undefined {
    const value = this.young.get(key);
    return value !== undefined || this.young.has(key) ? value : this.old.get(key);
  }

  set(key: K, value: V): void {
    this.young.set(key, value);
    if (this.young.size >= this.capacity / 2) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  delete(key: K): void {
    this.young.delete(key);
    this.old.delete(key);
  }

  /** Keys held, counting a key in both generations once per generation (at most `capacity`). */
  get size(): number {
    return this.young.size + this.old.size;
  }
}
