import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { DealTerms, WorkflowState } from './deal-terms';
import { effectiveState } from './deal-workflow';
import { DealCommand, dealDecider } from './deal.decider';
import { DealEvent } from './deal.events';

const terms = (overrides: Partial<DealTerms> = {}): DealTerms => ({
  id: 'spa-day',
  title: 'Spa day',
  type: 'daily-deal',
  current_price: 2500,
  value: 6000,
  start_at: '2026-01-01T00:00:00.000Z',
  end_at: '2026-01-05T00:00:00.000Z',
  fulfillment_method: 'printed',
  region_id: 'new-york',
  ...overrides,
});
const given = deciderSpec(dealDecider);
const listed = (state: WorkflowState = 'in-flight'): DealEvent => ({ type: 'DealListed', data: { deal: terms(), state } });
const list = (deal: DealTerms, state?: WorkflowState): DealCommand => ({ type: 'ListDeal', data: { deal, state } });
const move = (to: string): DealCommand => ({ type: 'TransitionDeal', data: { dealId: 'spa-day', to: to as never } });

describe('deal decider', () => {
  describe('a deal not yet listed', () => {
    it('is listed, submitted unless a state is given', () => {
      given([])
        .when(list(terms()))
        .then([{ type: 'DealListed', data: { deal: terms(), state: 'submitted' } }]);
      given([])
        .when(list(terms(), 'in-flight'))
        .then([{ type: 'DealListed', data: { deal: terms(), state: 'in-flight' } }]);
    });
    it('refuses bad terms, naming every bad field', () => {
      given([])
        .when(list(terms({ current_price: 12.5, end_at: '2025-01-01T00:00:00Z', type: 'bogus' as never })))
        .thenThrows(ValidationFailed, {
          issues: expect.arrayContaining([
            expect.objectContaining({ field: 'current_price', resource: 'deal' }),
            expect.objectContaining({ field: 'end_at' }),
            expect.objectContaining({ field: 'type' }),
          ]),
        });
    });
    it('refuses legal text on a deal that is not printed', () => {
      given([])
        .when(list(terms({ fulfillment_method: 'shipped', fine_print_legalese: 'x' })))
        .thenThrows(ValidationFailed);
    });
    it('cannot be moved', () => given([]).when(move('in-flight')).thenThrows(NotFound));
  });

  describe('a listed deal', () => {
    it('records only the fields that changed, and those removed', () => {
      const { current_price: _, ...rest } = terms();
      void _;
      given([listed()])
        .when(list({ ...rest, current_price: 2000, title: 'Spa day' } as DealTerms))
        .then([{ type: 'DealRevised', data: { dealId: 'spa-day', changes: { current_price: 2000 }, removed: [] } }]);
      given([listed()]).when(list(terms())).then([]);
    });
    it('follows the workflow', () => {
      given([listed('submitted')])
        .when(move('in-review'))
        .then([{ type: 'DealStateChanged', data: { dealId: 'spa-day', from: 'submitted', to: 'in-review' } }]);
      given([listed('in-flight')])
        .when(move('paused'))
        .then([{ type: 'DealStateChanged', data: { dealId: 'spa-day', from: 'in-flight', to: 'paused' } }]);
      given([listed('landed')])
        .when(move('deleted'))
        .then([{ type: 'DealStateChanged', data: { dealId: 'spa-day', from: 'landed', to: 'deleted' } }]);
      given([listed('landed')])
        .when(move('cancelled'))
        .thenThrows(ValidationFailed);
      given([listed('submitted')])
        .when(move('in-flight'))
        .thenThrows(ValidationFailed);
      given([listed('submitted')])
        .when(move('flying'))
        .thenThrows(ValidationFailed);
      given([listed('in-flight')])
        .when(move('in-flight'))
        .then([]);
    });
  });

  describe('effective state from the clock', () => {
    const deal = { start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-05T00:00:00Z' };
    it('puts an approved deal in flight at its start and lands it at its end', () => {
      expect(effectiveState({ ...deal, state: 'approved' }, new Date('2025-12-31T23:59:59Z'))).toBe('approved');
      expect(effectiveState({ ...deal, state: 'approved' }, new Date('2026-01-01T00:00:00Z'))).toBe('in-flight');
      expect(effectiveState({ ...deal, state: 'in-flight' }, new Date('2026-01-05T00:00:00Z'))).toBe('landed');
      expect(effectiveState({ ...deal, state: 'paused' }, new Date('2026-01-06T00:00:00Z'))).toBe('landed');
      expect(effectiveState({ ...deal, state: 'submitted' }, new Date('2026-01-06T00:00:00Z'))).toBe('submitted');
    });
  });
});
