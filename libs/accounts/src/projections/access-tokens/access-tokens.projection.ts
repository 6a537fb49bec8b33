import { defineProjection, ViewDocument } from '@deals/kernel';
import type { AccessTokenIssued, TokenAccess, TokenResource } from '../../domain/access-token/access-token';

/** "Which user, scope and access does the token with this hash carry, and until when?" */
export interface AccessTokenView extends ViewDocument {
  partnerId: string;
  userId: string;
  scope: TokenResource[] | 'all';
  access: TokenAccess[];
  expiresAt: string;
  /** The partner's key it was issued with (absent on tokens issued before keys had ids). */
  keyId?: string;
}

export const ACCESS_TOKENS = 'access_tokens';

export const accessTokensProjection = defineProjection<AccessTokenView>({
  name: ACCESS_TOKENS,
  handles: ['AccessTokenIssued'],
  indexes: [{ keys: { userId: 1 } }],
  documentIds: (event) => [(event.data as { tokenHash: string }).tokenHash],
  evolve(_view, recorded, id) {
    const { partnerId, userId, scope, access, expiresAt, keyId } = (recorded as unknown as AccessTokenIssued).data;
    return { _id: id, _pos: recorded.position, partnerId, userId, scope, access, expiresAt, ...(keyId === undefined ? {} : { keyId }) };
  },
});
