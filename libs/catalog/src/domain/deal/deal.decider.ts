import { Decider, DomainCommand, ignoredEvent, NotFound, unknownCommand, ValidationFailed, ValidationIssue } from '@deals/kernel';
import { DealTerms, validateDealTerms, WORKFLOW_STATES, WorkflowState } from './deal-terms';
import { canMove } from './deal-workflow';
import { DealEvent } from './deal.events';

export type ListDeal = DomainCommand<'ListDeal', { deal: DealTerms; state?: WorkflowState }>;
export type TransitionDeal = DomainCommand<'TransitionDeal', { dealId: string; to: WorkflowState }>;
export type DealCommand = ListDeal | TransitionDeal;

/** A deal's stream: none yet, or a listed deal, its terms and where it stands in the workflow. */
export type Deal = { status: 'unlisted' } | ListedDeal;

export interface ListedDeal {
  status: 'listed';
  terms: DealTerms;
  state: WorkflowState;
}

const unknownState: ValidationIssue = {
  type: 'invalid',
  resource: 'deal',
  field: 'state',
  message: `must be one of ${WORKFLOW_STATES.join(', ')}`,
};

function transition(deal: ListedDeal, dealId: string, to: WorkflowState): DealEvent[] {
  if (!WORKFLOW_STATES.includes(to)) throw new ValidationFailed([unknownState]);
  if (deal.state === to) return [];
  if (!canMove(deal.state, to)) {
    // eslint-disable-next-line no-restricted-syntax -- workflow states of ours
    throw new ValidationFailed([{ type: 'invalid', resource: 'deal', field: 'state', message: `cannot move from ${deal.state} to ${to}` }]);
  }
  return [{ type: 'DealStateChanged', data: { dealId, from: deal.state, to } }];
}

/** Fields that changed between two versions of the terms, and fields no longer given. */
function difference(before: DealTerms, after: DealTerms): { changes: Partial<DealTerms>; removed: string[] } {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(after)) {
    if (JSON.stringify(value) !== JSON.stringify((before as unknown as Record<string, unknown>)[key])) changes[key] = value;
  }
  const removed = Object.keys(before).filter((key) => !(key in after));
  return { changes: changes as Partial<DealTerms>, removed };
}

export const dealDecider: Decider<Deal, DealCommand, DealEvent> = {
  initialState: () => ({ status: 'unlisted' }),

  decide(command, deal) {
    switch (command.type) {
      case 'ListDeal': {
        const { deal: terms, state } = command.data;
        const issues = validateDealTerms(terms);
        if (state !== undefined && !WORKFLOW_STATES.includes(state)) issues.push(unknownState);
        if (issues.length) throw new ValidationFailed(issues);
        if (deal.status === 'unlisted') return [{ type: 'DealListed', data: { deal: terms, state: state ?? 'submitted' } }];
        const { changes, removed } = difference(deal.terms, terms);
        const events: DealEvent[] =
          Object.keys(changes).length || removed.length ? [{ type: 'DealRevised', data: { dealId: terms.id, changes, removed } }] : [];
        return state === undefined ? events : [...events, ...transition(deal, terms.id, state)];
      }
      case 'TransitionDeal':
        if (deal.status === 'unlisted') throw new NotFound('deal not found');
        return transition(deal, command.data.dealId, command.data.to);
      default:
        return unknownCommand(command);
    }
  },

  evolve(deal, event) {
    if (event.type === 'DealListed') return { status: 'listed', terms: event.data.deal, state: event.data.state };
    // Every other event follows the listing (one before it is none the decider wrote, and is ignored).
    if (deal.status === 'unlisted') return deal;
    switch (event.type) {
      case 'DealRevised': {
        const terms = { ...deal.terms, ...event.data.changes } as unknown as Record<string, unknown>;
        for (const key of event.data.removed) delete terms[key];
        return { ...deal, terms: terms as unknown as DealTerms };
      }
      case 'DealStateChanged':
        return { ...deal, state: event.data.to };
      default:
        return ignoredEvent(event, deal);
    }
  },
};
