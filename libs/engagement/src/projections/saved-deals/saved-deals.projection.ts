import { defineProjection, ViewDocument } from '@deals/kernel';
import type { SavedDealEvent } from '../../domain/saved-deal/saved-deal.decider';

/** "Which deals has user X saved?" A removed one is kept, marked (views never delete). */
export interface SavedDealView extends ViewDocument {
  partnerId: string;
  userId: string;
  dealId: string;
  savedAt: string;
  removed: boolean;
}

export const SAVED_DEALS = 'saved_deals';

export const savedDealsProjection = defineProjection<SavedDealView>({
  name: SAVED_DEALS,
  handles: ['DealSaved', 'SavedDealRemoved'],
  indexes: [{ keys: { userId: 1 } }, { keys: { partnerId: 1 } }],
  documentIds: (event) => [(event.data as { savedDealId: string }).savedDealId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as SavedDealEvent;
    if (event.type === 'SavedDealRemoved') return view && { ...view, removed: true };
    const { partnerId, userId, dealId, savedAt } = event.data;
    return { _id: id, _pos: recorded.position, partnerId, userId, dealId, savedAt, removed: false };
  },
});
