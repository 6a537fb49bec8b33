import type { WorkflowState } from './deal-terms';

const LIVE: WorkflowState[] = ['submitted', 'in-review', 'approved', 'in-flight', 'paused'];

/** The deal workflow's transitions (docs/decisions.md, "Deal workflow"). */
const NEXT: Record<WorkflowState, WorkflowState[]> = {
  submitted: ['in-review'],
  'in-review': ['approved', 'rejected'],
  approved: ['in-flight'],
  'in-flight': ['paused', 'landed'],
  paused: ['in-flight'],
  rejected: [],
  cancelled: [],
  landed: [],
  deleted: [],
};

export function canMove(from: WorkflowState, to: WorkflowState): boolean {
  if (from === to) return false;
  if (to === 'deleted') return true;
  if (to === 'cancelled') return LIVE.includes(from);
  return NEXT[from].includes(to);
}

export interface Schedule {
  state: WorkflowState;
  start_at: string;
  end_at: string;
}

/**
 * The state a deal is in at `now`: an approved deal is in flight from its start, and an in-flight
 * or paused deal has landed once its end has passed, whether or not anybody recorded the move.
 */
export function effectiveState(deal: Schedule, now: Date): WorkflowState {
  return effectiveStateAt(deal.state, Date.parse(deal.start_at), Date.parse(deal.end_at), now.getTime());
}

/** {@link effectiveState} over epoch milliseconds, for callers that hold them already. */
export function effectiveStateAt(state: WorkflowState, startAt: number, endAt: number, now: number): WorkflowState {
  const started = startAt <= now;
  const ended = endAt <= now;
  if ((state === 'in-flight' || state === 'paused' || state === 'approved') && ended) return 'landed';
  if (state === 'approved' && started) return 'in-flight';
  return state;
}
