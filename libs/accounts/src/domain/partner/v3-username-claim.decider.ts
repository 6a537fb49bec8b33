import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand } from '@deals/kernel';
import { hashSecret } from './partner-credentials';

/** Whose v3 username a username is (its hash): the partner whose stream holds its passwords. */
export type V3UsernameClaimed = DomainEvent<'V3UsernameClaimed', { usernameHash: string; partnerId: string }>;

export type ClaimV3Username = DomainCommand<'ClaimV3Username', V3UsernameClaimed['data']>;

/**
 * One stream a v3 username, named by its hash: how a process whose views do not know a partner's
 * username or newest password yet finds the partner in the log with one read by stream id (a wrong
 * username finds none). The partner's own stream stays what says which passwords work.
 */
export const v3UsernameStream = (username: string) => `v3user-${hashSecret(username)}`;

export const v3UsernameClaimDecider: Decider<{ partnerId: string | null }, ClaimV3Username, V3UsernameClaimed> = {
  initialState: () => ({ partnerId: null }),
  decide(command, claim) {
    switch (command.type) {
      case 'ClaimV3Username':
        if (claim.partnerId === null) return [{ type: 'V3UsernameClaimed', data: command.data }];
        if (claim.partnerId === command.data.partnerId) return [];
        // Usernames are unique (the accounts view's index): the first claim stands.
        throw new Error('the v3 username is claimed already');
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(claim, event) {
    switch (event.type) {
      case 'V3UsernameClaimed':
        return { partnerId: event.data.partnerId };
      default:
        return ignoredEvent(event.type, claim);
    }
  },
};
