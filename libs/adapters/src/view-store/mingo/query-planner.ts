import type { FindOptions, SortSpec, ViewDocument, ViewFilter } from '@deals/kernel';
import type { Bitset } from './bitset';
import { candidateBits, Candidates, rangeOf } from './candidate-sources';
import type { CollectionIndex } from './collection-index';
import type { Scalar } from './field-path';
import type { DocTest } from './field-tests';
import { CompiledFilter, compileFilter } from './predicate-compiler';
import type { Range, SortedIndex } from './sorted-index';
import { orderScalars, sortDocuments } from './sort-order';

/** How a query was answered, for tests and benches. */
export type Plan = 'candidates' | 'walk' | 'scan';

// Candidates tested to estimate how many match, before choosing between sorting and walking.
const SAMPLE = 64;
// Relative costs of passing over an index entry the candidate bits rule out, testing a document,
// and one comparison while sorting, on deal-like documents; with them the planner picks the faster
// of sorting and walking at any candidate count (docs/performance.md).
const STEP = 1;
const TEST = 15;
const COMPARE = 5;

/** A filter with its compiled form. */
export interface PreparedFilter {
  filter: ViewFilter;
  compiled: CompiledFilter;
}

const QUERY_CACHE_LIMIT = 1000;

/** JSON loses what tells some filters apart: regular expressions, dates, NaN and infinities, undefined. */
function cacheable(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof RegExp) return { $__regex: [raw.source, raw.flags] };
  if (raw instanceof Date) return { $__date: raw.getTime() };
  if (typeof raw === 'number' && !Number.isFinite(raw)) return { $__number: String(raw) };
  return value === undefined ? { $__undefined: true } : value;
}

/** Filters compiled, once per distinct filter (compiled tests keep no reference to the caller's object). */
export class CompiledFilters {
  private readonly compiled = new Map<string, CompiledFilter>();

  prepared(filter: ViewFilter): PreparedFilter {
    const key = JSON.stringify(filter, cacheable);
    let compiled = this.compiled.get(key);
    if (!compiled) {
      if (this.compiled.size >= QUERY_CACHE_LIMIT) this.compiled.clear();
      compiled = compileFilter(filter);
      this.compiled.set(key, compiled);
    }
    return { filter, compiled };
  }
}

const ALWAYS: DocTest = () => true;

/**
 * Answers `find` over an indexed in-memory collection. The indexes first give the candidates (a
 * bitset, `candidateBits`), and the filter is tested only for the conditions they leave open; then:
 * - without a sort, candidates are tested in slot order until `skip + limit` match;
 * - with a sort whose first key has a usable sorted index, either the candidates are tested and
 *   the matches sorted, or that index is walked in the requested direction (within the range the
 *   filter allows on that field), skipping non-candidates and stopping once `skip + limit` matches
 *   are in, whichever costs less by an estimate of the number of matches from a sample;
 * - otherwise the candidates (all documents without any) are tested and the matches sorted.
 */
export function find(index: CollectionIndex, query: PreparedFilter, options: FindOptions, explain?: (plan: Plan) => void): ViewDocument[] {
  try {
    const candidates = candidateBits(index, query.filter);
    return plan(index, candidates, residue(query, candidates), query.filter, options, explain);
  } finally {
    index.pool.release();
  }
}

/** Counts matches: the candidates when the indexes settle the whole filter, else those that pass the rest; never sorts. */
export function count(index: CollectionIndex, query: PreparedFilter): number {
  if (Object.keys(query.filter).length === 0) return index.size;
  try {
    const candidates = candidateBits(index, query.filter);
    if (candidates.complete) return candidates.bits ? candidates.bits.count() : index.size;
    const test = residue(query, candidates);
    let n = 0;
    each(index, candidates.bits, (doc) => {
      if (test(doc as never)) n++;
    });
    return n;
  } finally {
    index.pool.release();
  }
}

/** The part of the filter the candidates do not settle. */
function residue(query: PreparedFilter, candidates: Candidates): DocTest {
  if (candidates.complete) return ALWAYS;
  return candidates.exact.size ? query.compiled.without(candidates.exact) : query.compiled.test;
}

function plan(
  index: CollectionIndex,
  { bits }: Candidates,
  test: DocTest,
  filter: ViewFilter,
  options: FindOptions,
  explain?: (plan: Plan) => void,
): ViewDocument[] {
  const skip = Math.max(0, options.skip ?? 0);
  const want = options.limit ? skip + options.limit : Infinity;
  const sort = options.sort && Object.keys(options.sort).length > 0 ? options.sort : null;
  const tested: Plan = bits ? 'candidates' : 'scan';
  if (!sort) {
    explain?.(tested);
    const found: ViewDocument[] = [];
    let skipped = 0;
    each(index, bits, (doc) => {
      if (!test(doc as never)) return true;
      if (skipped < skip) skipped++;
      else found.push(doc);
      return found.length < want - skip;
    });
    return found;
  }
  const sorted = index.sorted.get(Object.keys(sort)[0]);
  const candidates = bits ? bits.count() : index.size;
  // A few candidates are sorted outright; asking `usable` would bring the index up to date (or build it).
  if (candidates > SAMPLE && sorted?.usable) {
    const range = rangeOf(filter, sorted) ?? { lo: 0, hi: sorted.keys.length };
    if (walkIsCheaper(index, bits, candidates, test, range, want)) {
      const found = walk(index, sorted, range, sort, bits, test, skip, want);
      if (found) {
        explain?.('walk');
        return found;
      }
    }
  }
  const matches: ViewDocument[] = [];
  each(index, bits, (doc) => {
    if (test(doc as never)) matches.push(doc);
  });
  explain?.(tested);
  return sortDocuments(matches, sort, want).slice(skip, want);
}

function each(index: CollectionIndex, bits: Bitset | null, visit: (doc: ViewDocument) => boolean | void): void {
  const docs = index.bySlot;
  if (bits) bits.each((slot) => visit(docs[slot]));
  else for (let slot = 0; slot < docs.length && visit(docs[slot]) !== false; slot++);
}

function walkIsCheaper(
  index: CollectionIndex,
  bits: Bitset | null,
  candidates: number,
  test: DocTest,
  range: Range,
  want: number,
): boolean {
  const walkLength = Math.max(0, range.hi - range.lo);
  let sampled = 0;
  let hits = 0;
  each(index, bits, (doc) => {
    if (test(doc as never)) hits++;
    return ++sampled < SAMPLE;
  });
  const matches = Math.max(1, (hits / sampled) * candidates);
  const density = Math.min(1, candidates / Math.max(1, walkLength));
  const walked = want === Infinity ? walkLength : Math.min(walkLength, (want * walkLength) / matches);
  return walked * (STEP + density * TEST) < candidates * TEST + matches * Math.log2(matches + 1) * COMPARE;
}

/**
 * Walks `sorted` over `range` in the direction of the sort's first key, testing candidates, until
 * `want` matches are in. Matches with equal first keys form a run, walked whole and ordered by the
 * remaining keys (then `_id`), as a full sort would order them; null when a remaining key has
 * array or object values (see `orderScalars`).
 */
function walk(
  index: CollectionIndex,
  sorted: SortedIndex,
  range: Range,
  sort: SortSpec,
  bits: Bitset | null,
  test: DocTest,
  skip: number,
  want: number,
): ViewDocument[] | null {
  const [first, ...others] = Object.keys(sort);
  const rest: SortSpec = {};
  for (const key of others) rest[key] = sort[key];
  const step = sort[first] === -1 ? -1 : 1;
  // The index orders equal keys by ascending _id: a run ordered by _id alone needs at most reversing.
  const byIdOnly = others.length === 0 || (others.length === 1 && others[0] === '_id');
  const order: Settle = byIdOnly ? ((others.length ? sort._id : 1) === step ? 'keep' : 'reverse') : rest;
  const { keys, slots } = sorted;
  const docs = index.bySlot;
  const { lo } = range;
  const hi = Math.max(lo, range.hi);
  const found: ViewDocument[] = [];
  let runKey: Scalar | undefined;
  let runStart = 0;
  for (let i = step === 1 ? lo : hi - 1; i >= lo && i < hi; i += step) {
    if (found.length >= want && keys[i] !== runKey) break;
    const slot = slots[i];
    if (bits && !bits.has(slot)) continue;
    const doc = docs[slot];
    if (!test(doc as never)) continue;
    if (keys[i] !== runKey) {
      if (!settle(found, runStart, order)) return null;
      runKey = keys[i];
      runStart = found.length;
    }
    found.push(doc);
  }
  return settle(found, runStart, order) ? found.slice(skip, want) : null;
}

/** How a walk orders a run of equal first keys: as walked, reversed, or sorted by the other keys. */
type Settle = 'keep' | 'reverse' | SortSpec;

function settle(found: ViewDocument[], runStart: number, order: Settle): boolean {
  if (found.length - runStart < 2 || order === 'keep') return true;
  if (order === 'reverse') {
    for (let a = runStart, b = found.length - 1; a < b; a++, b--) [found[a], found[b]] = [found[b], found[a]];
    return true;
  }
  const run = orderScalars(found.slice(runStart), order);
  if (!run) return false;
  for (let j = 0; j < run.length; j++) found[runStart + j] = run[j];
  return true;
}
