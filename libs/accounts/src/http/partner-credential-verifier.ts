import { ViewStore } from '@deals/kernel';
import { CredentialVerifier, PartnerRef, UserTokenRef } from '@deals/wire';
import { tokenHash } from '../domain/access-token/access-token';
import { ACCESS_TOKENS, AccessTokenView } from '../projections/access-tokens/access-tokens.projection';
import { Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../domain/partner/partner-credentials';
import { PARTNER_CREDENTIALS, PartnerCredentials } from '../projections/partner-credentials/partner-credentials.projection';
import { USER_ACCOUNTS, UserAccount } from '../projections/user-accounts/user-accounts.projection';

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const toRef = (view: PartnerCredentials): PartnerRef => ({
  id: view._id,
  name: view.name,
  role: view.role,
  // Documents written before budgets existed have no such field.
  requestsPerMinute: view.requestsPerMinute ?? null,
});

/** How long a key that was found stays trusted without asking the view again. */
const KNOWN_KEY_TTL_MS = 5000;
const KNOWN_KEY_CAPACITY = 10_000;

/**
 * Checks partner credentials against the hashes in the partner view. Keys found are remembered for
 * a few seconds (every request presents one); keys not found are always looked up, so a partner
 * the CLI has just created is accepted at once.
 */
@Injectable()
export class PartnerCredentialVerifier extends CredentialVerifier {
  private readonly knownKeys = new Map<string, { partner: PartnerRef; until: number }>();

  constructor(private readonly views: ViewStore) {
    super();
  }

  async byApiKey(apiKey: string): Promise<PartnerRef | null> {
    const now = Date.now();
    const known = this.knownKeys.get(apiKey);
    if (known && known.until > now) return known.partner;
    const view = await this.views.findOne<PartnerCredentials>(PARTNER_CREDENTIALS, { apiKeyHash: hashSecret(apiKey) });
    if (!view) return null;
    if (this.knownKeys.size >= KNOWN_KEY_CAPACITY) this.knownKeys.clear();
    this.knownKeys.set(apiKey, { partner: toRef(view), until: now + KNOWN_KEY_TTL_MS });
    return toRef(view);
  }

  async byAccessToken(tokenId: string): Promise<{ partner: PartnerRef; token: UserTokenRef } | null> {
    const token = await this.views.findById<AccessTokenView>(ACCESS_TOKENS, tokenHash(tokenId));
    if (!token) return null;
    // A deleted user's tokens stop working: restoring the user is its partner's call.
    const user = await this.views.findById<UserAccount>(USER_ACCOUNTS, token.userId);
    if (!user || user.deleted) return null;
    const partner = await this.views.findById<PartnerCredentials>(PARTNER_CREDENTIALS, token.partnerId);
    if (!partner) return null;
    return {
      partner: toRef(partner),
      token: { userId: token.userId, scope: token.scope, access: token.access, expiresAt: token.expiresAt },
    };
  }

  async byUsernameAndPassword(username: string, password: string): Promise<PartnerRef | null> {
    const view = await this.views.findOne<PartnerCredentials>(PARTNER_CREDENTIALS, { username });
    return view && sameHash(view.passwordHash, hashSecret(password)) ? toRef(view) : null;
  }
}
