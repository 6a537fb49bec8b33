import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand, ValidationFailed } from '@deals/kernel';
import { createHash } from 'node:crypto';

/** Resources a token's scope may name (or `all`). */
export const TOKEN_RESOURCES = ['user', 'credit_card', 'purchase', 'coupon', 'card_link', 'saved_deal', 'subscription'] as const;
export type TokenResource = (typeof TOKEN_RESOURCES)[number];
export type TokenAccess = 'read' | 'write';

/** The longest life a token may be given: thirty days. */
export const MAX_TOKEN_LIFE_SECONDS = 30 * 24 * 3600;

export interface TokenGrant {
  scope: TokenResource[] | 'all';
  access: TokenAccess[];
  expiresIn: number;
}

export type AccessTokenIssued = DomainEvent<
  'AccessTokenIssued',
  {
    tokenHash: string;
    partnerId: string;
    userId: string;
    scope: TokenResource[] | 'all';
    access: TokenAccess[];
    issuedAt: string;
    expiresAt: string;
    /** The partner's API key the token was issued with: revoking that key ends the token too. */
    keyId?: string;
  }
>;
export type IssueAccessToken = DomainCommand<'IssueAccessToken', AccessTokenIssued['data']>;

/** The token's secret is its id; the service keeps only its SHA-256 (a 256-bit random secret). */
export const tokenHash = (tokenId: string) => createHash('sha256').update(tokenId).digest('hex');
export const accessTokenStream = (hash: string) => `accesstoken-${hash.slice(0, 40)}`;

export const accessTokenDecider: Decider<{ issued: boolean }, IssueAccessToken, AccessTokenIssued> = {
  initialState: () => ({ issued: false }),
  decide(command, token) {
    switch (command.type) {
      case 'IssueAccessToken':
        if (token.issued)
          throw new ValidationFailed([{ type: 'invalid', resource: 'access_token', field: 'id', message: 'is already issued' }]);
        return [{ type: 'AccessTokenIssued', data: command.data }];
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(token, event) {
    switch (event.type) {
      case 'AccessTokenIssued':
        return { issued: true };
      default:
        return ignoredEvent(event.type, token);
    }
  },
};
