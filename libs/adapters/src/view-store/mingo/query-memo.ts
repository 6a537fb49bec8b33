import { Bitset } from './bitset';
import type { Candidates } from './candidate-sources';

/** What a query over one collection found, valid while the collection stays at `version`. */
export interface Remembered extends Candidates {
  version: number;
  /** Number of matches, when some plan tested every candidate. */
  matches: number | null;
}

const ENTRIES = 8;

/**
 * The last few queries' candidates and match counts, by filter. A list request asks `find` and
 * then `count` with the same filter; the second one then reuses the candidate set, or the count
 * itself when `find` had to test every candidate anyway.
 */
export class QueryMemo {
  private readonly entries = new Map<string, Remembered>();

  get(key: string, version: number): Remembered | undefined {
    const entry = this.entries.get(key);
    return entry && entry.version === version ? entry : undefined;
  }

  /** Keeps a copy of `candidates.bits` (unless it is the memo's own already). */
  remember(key: string, version: number, { bits, exact, complete }: Candidates, matches: number | null): void {
    let entry = this.entries.get(key);
    this.entries.delete(key);
    if (!entry && this.entries.size >= ENTRIES) {
      const [oldest] = this.entries.keys();
      entry = this.entries.get(oldest);
      this.entries.delete(oldest);
    }
    let kept: Bitset | null = null;
    if (bits && entry?.bits === bits) kept = bits;
    else if (bits) {
      // Reuses the evicted entry's buffer when it is large enough: see BitsetPool on why.
      kept = entry?.bits && entry.bits.words.length >= bits.words.length ? entry.bits : new Bitset(bits.words.length * 32);
      kept.words.fill(0).set(bits.words);
    }
    this.entries.set(key, { version, bits: kept, exact, complete, matches });
  }
}
