import { Decider, DomainCommand, DomainEvent, ignoredEvent, NotFound, unknownCommand } from '@deals/kernel';
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

/** A saved deal's stream: none yet, or a partner's user's deal, saved or removed (and saved again, the same one). */
export type SavedDeal = { status: 'none' } | { status: 'saved' | 'removed'; partnerId: string; userId: string; dealId: string };

export const savedDealDecider: Decider<SavedDeal, SavedDealCommand, SavedDealEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, saved, now) {
    switch (command.type) {
      case 'SaveDeal':
        return saved.status === 'saved' ? [] : [{ type: 'DealSaved', data: { ...command.data, savedAt: now.toISOString() } }];
      case 'RemoveSavedDeal': {
        const { savedDealId, partnerId, userId } = command.data;
        if (saved.status !== 'saved' || saved.partnerId !== partnerId || (userId !== undefined && saved.userId !== userId))
          throw new NotFound('saved deal not found');
        const removed = { savedDealId, partnerId, userId: saved.userId, dealId: saved.dealId, removedAt: now.toISOString() };
        return [{ type: 'SavedDealRemoved', data: removed }];
      }
      default:
        return unknownCommand(command);
    }
  },
  evolve(saved, event) {
    switch (event.type) {
      case 'DealSaved': {
        const { partnerId, userId, dealId } = event.data;
        return { status: 'saved', partnerId, userId, dealId };
      }
      case 'SavedDealRemoved':
        // A removal follows the saving (one before it is none the decider wrote, and is ignored).
        return saved.status === 'none' ? saved : { ...saved, status: 'removed' };
      default:
        return ignoredEvent(event, saved);
    }
  },
};
