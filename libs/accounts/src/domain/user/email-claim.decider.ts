import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand, ValidationFailed } from '@deals/kernel';
import { createHash } from 'node:crypto';

export type EmailClaimed = DomainEvent<'EmailClaimed', { partnerId: string; emailKey: string; userId: string }>;
export type EmailReleased = DomainEvent<'EmailReleased', { partnerId: string; emailKey: string; userId: string }>;
export type EmailClaimEvent = EmailClaimed | EmailReleased;

export type ClaimEmail = DomainCommand<'ClaimEmail', { partnerId: string; emailKey: string; userId: string }>;
export type ReleaseEmail = DomainCommand<'ReleaseEmail', { partnerId: string; emailKey: string; userId: string }>;

/**
 * One stream per (partner, email) holds which user owns the address: appending to it with the
 * expected revision makes uniqueness atomic, with no view to race against.
 */
export const emailClaimStream = (partnerId: string, key: string) =>
  `useremail-${createHash('sha256').update(`${partnerId}\n${key}`).digest('hex').slice(0, 40)}`;

/** The refusal of an address another user of the partner holds. */
export const emailTaken = () =>
  new ValidationFailed([{ type: 'invalid', resource: 'user', field: 'email', message: 'is already taken by another user' }]);

export interface EmailClaim {
  owner: string | null;
}

export const emailClaimDecider: Decider<EmailClaim, ClaimEmail | ReleaseEmail, EmailClaimEvent> = {
  initialState: () => ({ owner: null }),
  decide(command, claim) {
    switch (command.type) {
      case 'ClaimEmail':
        if (claim.owner === command.data.userId) return [];
        if (claim.owner !== null) throw emailTaken();
        return [{ type: 'EmailClaimed', data: command.data }];
      case 'ReleaseEmail':
        return claim.owner === command.data.userId ? [{ type: 'EmailReleased', data: command.data }] : [];
      default:
        return unknownCommand(command);
    }
  },
  evolve(claim, event) {
    switch (event.type) {
      case 'EmailClaimed':
        return { owner: event.data.userId };
      case 'EmailReleased':
        return { owner: null };
      default:
        return ignoredEvent(event, claim);
    }
  },
};
