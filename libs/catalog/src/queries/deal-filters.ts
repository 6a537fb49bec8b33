import type { ViewFilter } from '@deals/kernel';
import type { WorkflowState } from '../domain/deal/deal-terms';

/**
 * The view filter that selects deals whose effective state (domain/deal/deal-workflow.ts
 * `effectiveState`) is `state` at `now`, written over the stored state and the instants in epoch
 * milliseconds, so both view stores answer it with their indexes.
 */
export function effectiveStateFilter(state: WorkflowState, now: number): ViewFilter {
  switch (state) {
    case 'in-flight':
      return {
        $or: [
          { state: 'in-flight', endAt: { $gt: now } },
          { state: 'approved', startAt: { $lte: now }, endAt: { $gt: now } },
        ],
      };
    case 'approved':
      return { state: 'approved', startAt: { $gt: now }, endAt: { $gt: now } };
    case 'paused':
      return { state: 'paused', endAt: { $gt: now } };
    case 'landed':
      return { $or: [{ state: 'landed' }, { state: { $in: ['in-flight', 'paused', 'approved'] }, endAt: { $lte: now } }] };
    default:
      return { state };
  }
}

/** Deals on sale at `now`: the default of every list call. */
export const onSaleFilter = (now: number) => effectiveStateFilter('in-flight', now);

/** Escapes user text for a case-insensitive partial match. */
export function containsText(text: string): ViewFilter {
  return { $regex: text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), $options: 'i' };
}

/** Deals with at least one location within `miles` of a point (great circle). */
export function withinMiles(latitude: number, longitude: number, miles: number): ViewFilter {
  return { locs: { $geoWithin: { $centerSphere: [[longitude, latitude], miles / 3963.2] } } };
}
