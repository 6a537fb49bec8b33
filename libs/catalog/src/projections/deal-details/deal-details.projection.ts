import { defineProjection, RecordedEvent, ViewDocument } from '@deals/kernel';
import type { DealTerms, WorkflowState } from '../../domain/deal/deal-terms';
import type { DealEvent } from '../../domain/deal/deal.events';

/**
 * Inventory events as the catalogue reads them (the purchasing context owns and appends them).
 * Declared here so the catalogue depends on the published event, not on purchasing's code.
 */
type InventoryStocked = { type: 'InventoryStocked'; data: { dealId: string; total: number } };

/** "What is deal X now?": its terms, workflow state and inventory figures. */
export interface DealDetails extends ViewDocument {
  /** Null only while inventory has been stocked for a deal the view has not seen listed yet. */
  deal: DealTerms | null;
  state: WorkflowState;
  inventory: { total: number; sold: number };
}

export const DEAL_DETAILS = 'deal_details';

type Handled = DealEvent | InventoryStocked;

const dealIdOf = (event: Handled) => (event.type === 'DealListed' ? event.data.deal.id : event.data.dealId);

export const dealDetailsProjection = defineProjection<DealDetails>({
  name: DEAL_DETAILS,
  version: 1,
  handles: ['DealListed', 'DealRevised', 'DealStateChanged', 'InventoryStocked'],
  indexes: [{ keys: { 'deal.region_id': 1 } }, { keys: { state: 1 } }],
  documentIds: (event: RecordedEvent) => [dealIdOf(event as unknown as Handled)],
  evolve(view, recorded, id) {
    const event = recorded as unknown as Handled;
    const current: DealDetails = view ?? { _id: id, _pos: recorded.position, deal: null, state: 'submitted', inventory: { total: 0, sold: 0 } };
    switch (event.type) {
      case 'DealListed':
        return { ...current, deal: event.data.deal, state: event.data.state };
      case 'DealRevised': {
        const deal = { ...current.deal, ...event.data.changes } as Record<string, unknown>;
        for (const key of event.data.removed) delete deal[key];
        return { ...current, deal: deal as unknown as DealTerms };
      }
      case 'DealStateChanged':
        return { ...current, state: event.data.to };
      case 'InventoryStocked':
        return { ...current, inventory: { ...current.inventory, total: event.data.total } };
    }
  },
});
