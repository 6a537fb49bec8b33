import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand } from '@deals/kernel';
import { createHash } from 'node:crypto';

export type CardClaimed = DomainEvent<'CardClaimed', { partnerId: string; userId: string; cardId: string }>;
export type ClaimCard = DomainCommand<'ClaimCard', { partnerId: string; userId: string; cardId: string }>;

/**
 * One stream per (partner, user, card fingerprint) names the id the card is stored under, so the
 * same card stored for a user by calls at the same moment is one card (the full purchase reuses
 * a matching card), across processes too. The fingerprint is a peppered scrypt hash,
 * hashed again here: the stream's name reveals nothing of the card.
 */
export const cardClaimStream = (partnerId: string, userId: string, fingerprint: string) =>
  `usercard-${createHash('sha256').update(`${partnerId}\n${userId}\n${fingerprint}`).digest('hex').slice(0, 40)}`;

export const cardClaimDecider: Decider<{ cardId: string | null }, ClaimCard, CardClaimed> = {
  initialState: () => ({ cardId: null }),
  decide(command, claim) {
    switch (command.type) {
      case 'ClaimCard':
        return claim.cardId ? [] : [{ type: 'CardClaimed', data: command.data }];
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(claim, event) {
    switch (event.type) {
      case 'CardClaimed':
        return { cardId: event.data.cardId };
      default:
        return ignoredEvent(event.type, claim);
    }
  },
};
