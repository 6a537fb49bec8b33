import { unknownWords, ValidationFailed, ViewFilter } from '@deals/kernel';
import { onSaleFilter } from './deal-filters';
import { mergeFilters } from './merge-filters';

export const REGIONAL_WORDS = ['in_flight', 'offer', 'current', 'not_bg'] as const;
export type RegionalWord = (typeof REGIONAL_WORDS)[number];
/** The default filter words, kept for backwards compatibility. */
export const REGIONAL_DEFAULT: RegionalWord[] = ['in_flight', 'current', 'not_bg'];

/** Workflow states a regional list never shows: never approved, or withdrawn (deleted: removed). */
export const NOT_PUBLIC_STATES = ['submitted', 'in-review', 'rejected', 'cancelled', 'deleted'];

/** The tag that marks a background deal, hidden by `not_bg` (docs/decisions.md). */
export const BACKGROUND_TAG = 'bg';

/** Reads the `filter` words of a regional list; `user_id`, when given, must be text. */
export function parseRegionalFilter(params: Record<string, unknown>): RegionalWord[] {
  const raw = params.filter;
  if (params.user_id !== undefined && typeof params.user_id !== 'string') {
    throw new ValidationFailed([{ type: 'invalid', resource: 'deal', field: 'user_id', message: 'must be text' }]);
  }
  if (raw === undefined || raw === '') return REGIONAL_DEFAULT;
  const words = typeof raw === 'string' ? raw.split(',').map((w) => w.trim()) : null;
  const unknown = words === null ? ['(not text)'] : words.filter((w) => !(REGIONAL_WORDS as readonly string[]).includes(w));
  if (unknown.length) {
    throw new ValidationFailed([
      {
        type: 'invalid',
        resource: 'deal',
        field: 'filter',
        message: `takes words from ${REGIONAL_WORDS.join(', ')}; it has ${unknownWords(unknown)}`,
      },
    ]);
  }
  return words as RegionalWord[];
}

/**
 * in_flight: on sale now; current: running now (started, not ended), in any public workflow state;
 * offer: an offer rather than a voucher (affiliate or card-linked); not_bg: not a background deal.
 */
export function regionalFilter(words: RegionalWord[], regionId: string, now: number): ViewFilter {
  // Whatever the words, never a deal that is not public: not yet approved, rejected, cancelled or deleted.
  const parts: ViewFilter[] = [{ regionId }, { state: { $nin: NOT_PUBLIC_STATES } }];
  for (const word of new Set(words)) {
    if (word === 'in_flight') parts.push(onSaleFilter(now));
    if (word === 'current') parts.push({ startAt: { $lte: now }, endAt: { $gt: now } });
    if (word === 'offer') parts.push({ type: { $in: ['affiliate', 'card-linked'] } });
    if (word === 'not_bg') parts.push({ tags: { $ne: BACKGROUND_TAG } });
  }
  return mergeFilters(parts);
}
