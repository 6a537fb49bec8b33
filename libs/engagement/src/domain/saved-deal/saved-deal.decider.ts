import { Decider, DomainCommand, DomainEvent, NotFound } from '@deals/kernel';
import { naturalId } from '../natural-id';

export type DealSaved = DomainEvent<
  'DealSaved',
  { savedDealId: string; partnerId: string; userId: string; dealId: string; savedAt: string }
>;
export type SavedDealRemoved = DomainEvent<
  'SavedDealRemoved',
  { savedDealId: string; partnerId: string; userId: string; dealId: string; removedAt: string }
>;
export type SavedDealEvent = DealSaved | SavedDealRemoved;

export type SaveDeal = DomainCommand<'SaveDeal', { savedDealId: string; partnerId: string; userId: string; dealId: string }>;
/** `userId`: an access token's user, who may remove only its own. */
export type RemoveSavedDeal = DomainCommand<'RemoveSavedDeal', { savedDealId: string; partnerId: string; userId?: string }>;
export type SavedDealCommand = SaveDeal | RemoveSavedDeal;

/** A user's saved deal is one per (partner, user, deal): saved again after a removal, it is the same one. */
export const savedDealId = (partnerId: string, userId: string, dealId: string) => naturalId('saved-deal', partnerId, userId, dealId);
export const savedDealStream = (id: string) => `saveddeal-${id}`;

export interface SavedDeal {
  partnerId: string | null;
  userId: string | null;
  dealId: string | null;
  saved: boolean;
}

export const savedDealDecider: Decider<SavedDeal, SavedDealCommand, SavedDealEvent> = {
  initialState: () => ({ partnerId: null, userId: null, dealId: null, saved: false }),
  decide(command, saved, now) {
    if (command.type === 'SaveDeal')
      return saved.saved ? [] : [{ type: 'DealSaved', data: { ...command.data, savedAt: now.toISOString() } }];
    const { savedDealId, partnerId, userId } = command.data;
    if (!saved.saved || saved.partnerId !== partnerId || (userId !== undefined && saved.userId !== userId))
      throw new NotFound('saved deal not found');
    return [
      {
        type: 'SavedDealRemoved',
        data: { savedDealId, partnerId, userId: saved.userId!, dealId: saved.dealId!, removedAt: now.toISOString() },
      },
    ];
  },
  evolve(saved, event) {
    if (event.type === 'DealSaved')
      return { partnerId: event.data.partnerId, userId: event.data.userId, dealId: event.data.dealId, saved: true };
    return { ...saved, saved: false };
  },
};
