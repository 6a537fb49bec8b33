import { Bitset } from './bitset';

const ENTRIES = 4;

interface Entry {
  lo: number;
  hi: number;
  bits: Bitset;
}

/**
 * Slots of recent ranges of one sorted index, as bitsets. Ranges bounded by "now" move a little
 * between requests; a cached range is moved to the new bounds by adding and dropping the entries
 * in between, far cheaper than building it anew. The owner clears the cache whenever entries move
 * (a splice or a merge); writes that leave an index's keys alone keep it.
 */
export class RangeCache {
  private entries: Entry[] = [];

  clear(): void {
    this.entries = [];
  }

  /**
   * Slots `slots[lo..hi-1]` as a bitset, owned by the cache: read it or copy it before the next
   * call, which may change it.
   */
  bits(slots: readonly number[], lo: number, hi: number, size: number): Bitset {
    hi = Math.max(lo, hi);
    const fresh = Math.min(hi - lo, slots.length - (hi - lo));
    let best: Entry | undefined;
    let moves = Infinity;
    for (const entry of this.entries) {
      const distance = Math.abs(entry.lo - lo) + Math.abs(entry.hi - hi);
      if (distance < moves && entry.bits.words.length >= (size + 31) >>> 5) [best, moves] = [entry, distance];
    }
    if (!best || moves > fresh) {
      const dropped = this.entries.length >= ENTRIES ? this.entries.pop() : undefined;
      const bits = dropped && dropped.bits.words.length >= (size + 31) >>> 5 ? dropped.bits : new Bitset(size);
      build(bits, slots, lo, hi, size);
      best = { lo, hi, bits };
    } else move(best, slots, lo, hi);
    this.entries = [best, ...this.entries.filter((e) => e !== best)];
    return best.bits;
  }
}

/** Built from the smaller side: every slot is in a usable sorted index. */
function build(bits: Bitset, slots: readonly number[], lo: number, hi: number, size: number): void {
  bits.words.fill(0);
  if (2 * (hi - lo) <= slots.length) bits.addRange(slots, lo, hi);
  else bits.fill(size).removeRange(slots, 0, lo).removeRange(slots, hi, slots.length);
}

function move(entry: Entry, slots: readonly number[], lo: number, hi: number): void {
  if (lo < entry.lo) entry.bits.addRange(slots, lo, Math.min(entry.lo, hi));
  if (hi > entry.hi) entry.bits.addRange(slots, Math.max(entry.hi, lo), hi);
  if (lo > entry.lo) entry.bits.removeRange(slots, entry.lo, Math.min(lo, entry.hi));
  if (hi < entry.hi) entry.bits.removeRange(slots, Math.max(hi, entry.lo), entry.hi);
  entry.lo = lo;
  entry.hi = hi;
}
