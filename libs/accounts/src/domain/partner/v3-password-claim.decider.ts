import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand } from '@deals/kernel';

/** Whose v3 password a password hash is: the partner whose stream says whether it works. */
export type V3PasswordClaimed = DomainEvent<'V3PasswordClaimed', { passwordHash: string; partnerId: string }>;

export type ClaimV3Password = DomainCommand<'ClaimV3Password', V3PasswordClaimed['data']>;

/**
 * One stream a v3 password, named by its hash: how a process whose views do not show a password yet
 * (a partner just made, a password just rotated) finds its partner in the log with one read by
 * stream id. A wrong password finds no stream at all, whether its username is known or not: the
 * check costs the same for both, and nothing that grows with the partner's history.
 */
export const v3PasswordStream = (passwordHash: string) => `v3password-${passwordHash}`;

export const v3PasswordClaimDecider: Decider<{ partnerId: string | null }, ClaimV3Password, V3PasswordClaimed> = {
  initialState: () => ({ partnerId: null }),
  decide(command, claim) {
    switch (command.type) {
      case 'ClaimV3Password':
        if (claim.partnerId === null) return [{ type: 'V3PasswordClaimed', data: command.data }];
        if (claim.partnerId === command.data.partnerId) return [];
        // 192 random bits: two passwords with one hash do not happen; the first claim stands.
        throw new Error('the password hash is claimed already');
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(claim, event) {
    switch (event.type) {
      case 'V3PasswordClaimed':
        return { partnerId: event.data.partnerId };
      default:
        return ignoredEvent(event.type, claim);
    }
  },
};
