import { Decider, DomainCommand, DomainEvent, ValidationFailed, ValidationIssue } from '@deals/kernel';
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

/** Part 4.15's `expires_in`, `scope` and `access`, checked. */
export function readGrant(input: { expires_in?: unknown; scope?: unknown; access?: unknown }): TokenGrant {
  const issues: ValidationIssue[] = [];
  const fail = (field: string, message: string, type: ValidationIssue['type'] = 'invalid') =>
    issues.push({ type, message, resource: 'access_token', field });
  const expiresIn = typeof input.expires_in === 'string' && /^\d+$/.test(input.expires_in) ? Number(input.expires_in) : input.expires_in;
  if (expiresIn === undefined) fail('expires_in', 'is required', 'missing_field');
  else if (!Number.isSafeInteger(expiresIn) || (expiresIn as number) < 1 || (expiresIn as number) > MAX_TOKEN_LIFE_SECONDS) {
    fail('expires_in', `must be whole seconds from 1 to ${MAX_TOKEN_LIFE_SECONDS}`);
  }
  let scope: TokenGrant['scope'] = [];
  if (typeof input.scope !== 'string' || input.scope.trim() === '')
    fail('scope', 'is required: resource names separated by commas, or all', 'missing_field');
  else if (input.scope.trim() === 'all') scope = 'all';
  else {
    const names = input.scope.split(',').map((s) => s.trim());
    const unknown = names.filter((n) => !(TOKEN_RESOURCES as readonly string[]).includes(n));
    if (unknown.length) fail('scope', `names unknown resources (${unknown.join(', ')}); known: ${TOKEN_RESOURCES.join(', ')}, or all`);
    scope = [...new Set(names)] as TokenResource[];
  }
  let access: TokenAccess[] = [];
  const accessText = typeof input.access === 'string' ? input.access.replace(/\s/g, '') : undefined;
  if (accessText === undefined) fail('access', 'is required: read, write or read,write', 'missing_field');
  else if (!['read', 'write', 'read,write', 'write,read'].includes(accessText)) fail('access', 'must be read, write or read,write');
  else access = accessText.split(',').sort() as TokenAccess[];
  if (issues.length) throw new ValidationFailed(issues);
  return { scope, access, expiresIn: expiresIn as number };
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
  }
>;
export type IssueAccessToken = DomainCommand<'IssueAccessToken', AccessTokenIssued['data']>;

/** The token's secret is its id; the service keeps only its SHA-256 (a 256-bit random secret). */
export const tokenHash = (tokenId: string) => createHash('sha256').update(tokenId).digest('hex');
export const accessTokenStream = (hash: string) => `accesstoken-${hash.slice(0, 40)}`;

export const accessTokenDecider: Decider<{ issued: boolean }, IssueAccessToken, AccessTokenIssued> = {
  initialState: () => ({ issued: false }),
  decide(command, token) {
    if (token.issued)
      throw new ValidationFailed([{ type: 'invalid', resource: 'access_token', field: 'id', message: 'is already issued' }]);
    return [{ type: 'AccessTokenIssued', data: command.data }];
  },
  evolve: () => ({ issued: true }),
};
