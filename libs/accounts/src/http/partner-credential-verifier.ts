import {
  accountOf,
  Clock,
  EventStore,
  Forbidden,
  isSandbox,
  loadAggregate,
  NotFound,
  TestClockScope,
  Unauthorized,
  underTestClock,
  ValidationFailed,
  ViewStore,
} from '@deals/kernel';
import { CredentialVerifier, PartnerRef, UserTokenRef } from '@deals/wire';
import { Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { tokenHash } from '../domain/access-token/access-token';
import { hashSecret, PartnerPassword, PASSWORDS_HELD } from '../domain/partner/partner-credentials';
import { ApiKeyClaimed, apiKeyStream } from '../domain/partner/api-key-claim.decider';
import { partnerDecider, RegisteredPartner } from '../domain/partner/partner.decider';
import { partnerStream } from '../domain/partner/partner.events';
import { V3PasswordClaimed, v3PasswordStream } from '../domain/partner/v3-password-claim.decider';
import { ACCESS_TOKENS, AccessTokenView } from '../projections/access-tokens/access-tokens.projection';
import { PARTNER_ACCOUNTS, PartnerAccount } from '../projections/partner-accounts/partner-accounts.projection';
import { PARTNER_API_KEYS, PartnerApiKeyView } from '../projections/partner-api-keys/partner-api-keys.projection';
import { USER_ACCOUNTS, UserAccount } from '../projections/user-accounts/user-accounts.projection';
import { TEST_CLOCKS, TestClockView } from '../projections/test-clocks/test-clocks.projection';

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** What a password is compared with where a partner holds none (an unknown username, fewer than the most held): a hash no password has. */
const STAND_IN_HASH = hashSecret('no partner has this password');

/**
 * The password of `passwords` whose hash is `hash`; undefined when none. Each is compared (no early
 * end), and stand-ins up to {@link PASSWORDS_HELD}: as many compares for every username, known or
 * not, whatever its partner's rotations.
 */
function matchingPassword(passwords: readonly PartnerPassword[], hash: string): PartnerPassword | undefined {
  let matched: PartnerPassword | undefined;
  for (let i = 0; i < Math.max(PASSWORDS_HELD, passwords.length); i++) {
    const password = i < passwords.length ? passwords[i] : undefined;
    if (sameHash(password?.hash ?? STAND_IN_HASH, hash) && matched === undefined) matched = password;
  }
  return matched;
}
const toRef = (view: PartnerAccount, credentialId?: string): PartnerRef => ({
  id: view._id,
  name: view.name,
  role: view.role,
  requestsPerMinute: view.requestsPerMinute,
  livemode: view.sandboxOf === undefined,
  ...(credentialId === undefined ? {} : { credentialId }),
});

/** A partner as its stream holds it (registered), presenting `credentialId`. */
const refFromLog = (partnerId: string, state: RegisteredPartner, credentialId: string): PartnerRef => ({
  id: partnerId,
  name: state.name,
  role: state.role,
  requestsPerMinute: state.requestsPerMinute,
  livemode: !isSandbox(partnerId),
  credentialId,
});

/**
 * How long a key that was found stays trusted without asking the views again: short, since a
 * revocation must stop it on every replica within a second (each replica's views follow the log).
 */
const KNOWN_KEY_TTL_MS = 250;
const KNOWN_KEY_CAPACITY = 10_000;

interface KnownKey {
  partner: PartnerRef;
  expiresAt: number | null;
  revokedAt: string | null;
  /** performance.now() until which it is trusted. */
  until: number;
}

/** Refuses a key or password that no longer works, saying why (a right secret: telling it is safe). */
function refuseEnded(what: string, revokedAt: string | null, expiresAt: number | null, now: number): void {
  // eslint-disable-next-line no-restricted-syntax -- the credential's kind and the times the service recorded
  if (revokedAt !== null) throw new Unauthorized(`this ${what} was revoked at ${revokedAt}: use a live one`);
  if (expiresAt !== null && expiresAt <= now)
    // eslint-disable-next-line no-restricted-syntax -- the credential's kind and the times the service recorded
    throw new Unauthorized(`this ${what} expired at ${new Date(expiresAt).toISOString()}: use a live one`);
}

/**
 * Checks partner credentials against the hashes in the partner views: a key by its hash (it may be
 * revoked or expired), a v3 username and one of its passwords (the current one, or a replaced one
 * in its grace period). Keys found are remembered for a moment: every request presents one.
 *
 * A key the views do not show is looked for in the log: the views follow it a little behind, and a
 * key shown by a command a moment ago must work at once, on every replica. Its claim stream, named
 * by its hash, leads to its partner's stream, which says whether it works; a wrong key costs one
 * read by stream id that finds nothing (and is counted against its caller as any wrong key is).
 */
@Injectable()
export class PartnerCredentialVerifier extends CredentialVerifier {
  private readonly knownKeys = new Map<string, KnownKey>();
  /** Look-ups under way: the requests that find a key's entry stale together share one look-up. */
  private readonly lookingUp = new Map<string, Promise<KnownKey | null>>();

  constructor(
    private readonly views: ViewStore,
    private readonly clock: Clock,
    private readonly log: EventStore,
  ) {
    super();
  }

  async byApiKey(apiKey: string): Promise<PartnerRef | null> {
    // The cache's age in real time; the key's expiry by the service's clock.
    const elapsed = performance.now();
    let known = this.knownKeys.get(apiKey);
    if (!known || known.until <= elapsed) {
      let pending = this.lookingUp.get(apiKey);
      if (!pending) {
        pending = this.lookUp(apiKey, elapsed).finally(() => this.lookingUp.delete(apiKey));
        this.lookingUp.set(apiKey, pending);
      }
      const found = await pending;
      if (!found) return null;
      known = found;
    }
    refuseEnded('api_key', known.revokedAt, known.expiresAt, this.clock.now().getTime());
    return known.partner;
  }

  private async lookUp(apiKey: string, elapsed: number): Promise<KnownKey | null> {
    const keyHash = hashSecret(apiKey);
    const key = await this.views.findById<PartnerApiKeyView>(PARTNER_API_KEYS, keyHash);
    const account = key && (await this.views.findById<PartnerAccount>(PARTNER_ACCOUNTS, key.partnerId));
    const found =
      key && account
        ? {
            partner: toRef(account, key.keyId),
            expiresAt: key.expiresAt === null ? null : Date.parse(key.expiresAt),
            revokedAt: key.revokedAt,
          }
        : await this.fromLog(keyHash);
    if (!found) return null;
    const known = { ...found, until: elapsed + KNOWN_KEY_TTL_MS };
    if (this.knownKeys.size >= KNOWN_KEY_CAPACITY) this.knownKeys.clear();
    this.knownKeys.set(apiKey, known);
    return known;
  }

  /** A key the views do not show yet, from the log: its claim, then its partner's stream. */
  private async fromLog(keyHash: string): Promise<Omit<KnownKey, 'until'> | null> {
    const [claim] = (await this.log.readStream(apiKeyStream(keyHash))) as unknown as ApiKeyClaimed[];
    if (claim?.type !== 'ApiKeyClaimed') return null;
    const { partnerId, keyId } = claim.data;
    const { state } = await loadAggregate(this.log, partnerStream(partnerId), partnerDecider);
    if (state.status !== 'registered') return null;
    const key = Object.hasOwn(state.keys, keyId) ? state.keys[keyId] : undefined;
    if (!key || key.keyHash !== keyHash) return null;
    return {
      partner: refFromLog(partnerId, state, keyId),
      expiresAt: key.expiresAt === null ? null : Date.parse(key.expiresAt),
      revokedAt: key.revokedAt,
    };
  }

  async byAccessToken(tokenId: string): Promise<{ partner: PartnerRef; token: UserTokenRef } | null> {
    const token = await this.views.findById<AccessTokenView>(ACCESS_TOKENS, tokenHash(tokenId));
    if (!token) return null;
    // A deleted user's tokens stop working: restoring the user is its partner's call.
    const user = await this.views.findById<UserAccount>(USER_ACCOUNTS, token.userId);
    if (!user || user.deleted) return null;
    const partner = await this.views.findById<PartnerAccount>(PARTNER_ACCOUNTS, token.partnerId);
    if (!partner) return null;
    // A token acts by its key's authority, and ends with it: at once when the key is revoked (a leak),
    // at the end of its grace period when it expires (a rotation: the partner issues new tokens with
    // the new key meanwhile).
    const key =
      token.keyId === undefined
        ? null
        : await this.views.findOne<PartnerApiKeyView>(PARTNER_API_KEYS, { partnerId: token.partnerId, keyId: token.keyId });
    // eslint-disable-next-line no-restricted-syntax -- the times the service recorded
    if (key?.revokedAt) throw new Unauthorized(`the api_key that issued this access token was revoked at ${key.revokedAt}`);
    if (key?.expiresAt && Date.parse(key.expiresAt) <= this.clock.now().getTime())
      // eslint-disable-next-line no-restricted-syntax -- the times the service recorded
      throw new Unauthorized(`the api_key that issued this access token expired at ${key.expiresAt}`);
    return {
      partner: toRef(partner),
      token: { userId: token.userId, scope: token.scope, access: token.access, expiresAt: token.expiresAt },
    };
  }

  async testClock(partner: PartnerRef, clockId: string, writes: boolean): Promise<TestClockScope> {
    if (partner.livemode) throw new Forbidden('test clocks are a sandbox’s: make calls under one with your test credentials');
    const clock = clockId.length <= 64 ? await this.views.findById<TestClockView>(TEST_CLOCKS, clockId) : null;
    if (!clock || clock.deletedAt || clock.partnerId !== accountOf(partner.id)) throw new NotFound('test clock not found');
    if (writes && clock.status === 'advancing')
      throw new ValidationFailed([
        { type: 'invalid', resource: 'test_clock', field: 'status', message: 'is advancing: make the call again once the clock is ready' },
      ]);
    return { clockId, partnerId: underTestClock(clock.partnerId, clockId), at: new Date(clock.frozenTime) };
  }

  /**
   * The same work for a known and an unknown username, and none that grows with the partner's
   * history: one view look-up by username, the password's hash compared with as many hashes for
   * any name (see {@link matchingPassword}), then, unmatched, one read by stream id of the password's
   * claim, which finds nothing for a wrong password whatever the name.
   */
  async byUsernameAndPassword(username: string, password: string): Promise<PartnerRef | null> {
    const hash = hashSecret(password);
    const view = await this.views.findOne<PartnerAccount>(PARTNER_ACCOUNTS, { username });
    const matched = matchingPassword(view?.passwords ?? [], hash);
    // A partner or a password the views do not show yet (made or rotated a moment ago): from the log.
    const found =
      view && matched ? { partner: toRef(view, 'password'), expiresAt: matched.expiresAt } : await this.passwordFromLog(username, hash);
    if (!found) return null;
    refuseEnded('password', null, found.expiresAt === null ? null : Date.parse(found.expiresAt), this.clock.now().getTime());
    return found.partner;
  }

  /** A password the views do not show yet, from the log: its claim, then (a right password only) its partner's stream. */
  private async passwordFromLog(username: string, hash: string): Promise<{ partner: PartnerRef; expiresAt: string | null } | null> {
    const [claim] = (await this.log.readStream(v3PasswordStream(hash))) as unknown as V3PasswordClaimed[];
    if (claim?.type !== 'V3PasswordClaimed') return null;
    const { partnerId } = claim.data;
    const { state } = await loadAggregate(this.log, partnerStream(partnerId), partnerDecider);
    if (state.status !== 'registered') return null;
    const matched = matchingPassword(state.passwords, hash);
    if (state.username !== username || !matched) return null;
    return {
      partner: refFromLog(partnerId, state, 'password'),
      expiresAt: matched.expiresAt,
    };
  }
}
