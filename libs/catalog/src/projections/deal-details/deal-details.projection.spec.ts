import { applyEvents, RecordedEvent } from '@deals/kernel';
import { DealDetails, dealDetailsProjection } from './deal-details.projection';

let n = 0;
const recorded = (type: string, data: unknown): RecordedEvent => ({
  id: `e${++n}`, type, data, metadata: { occurredAt: '2026-01-01T00:00:00Z' }, streamId: 's', revision: 0, position: String(n).padStart(20, '0'),
});
const deal = { id: 'spa', title: 'Spa', type: 'daily-deal', current_price: 100, value: 300, start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-02T00:00:00Z', fulfillment_method: 'printed', region_id: 'ny' };

describe('deal details projection', () => {
  const events = [
    recorded('DealListed', { deal, state: 'approved' }),
    recorded('InventoryStocked', { dealId: 'spa', total: 40 }),
    recorded('DealRevised', { dealId: 'spa', changes: { current_price: 90 }, removed: [] }),
    recorded('DealStateChanged', { dealId: 'spa', from: 'approved', to: 'in-flight' }),
    recorded('SomethingElse', { dealId: 'spa' }),
  ];

  it('folds listing, stock, revision and state into one document', () => {
    const [view] = applyEvents(dealDetailsProjection, new Map(), events);
    expect(view).toEqual({
      _id: 'spa', _pos: events[3].position, deal: { ...deal, current_price: 90 }, state: 'in-flight', inventory: { total: 40, sold: 0 },
    });
  });

  it('changes nothing when the same events are applied again', () => {
    const [view] = applyEvents(dealDetailsProjection, new Map(), events);
    expect(applyEvents(dealDetailsProjection, new Map<string, DealDetails>([['spa', view]]), events)).toEqual([]);
  });
});
