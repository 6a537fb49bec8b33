import { Clock, EventStore, loadAggregate, NotFound, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { KeyState, keyState, partnerDecider } from '../domain/partner/partner.decider';
import { DEFAULT_ROLLBACK_WINDOW_HOURS, PartnerRole, partnerStream } from '../domain/partner/partner.events';
import { PARTNER_ACCOUNTS, PartnerAccount } from '../projections/partner-accounts/partner-accounts.projection';
import { PARTNER_API_KEYS, PartnerApiKeyView } from '../projections/partner-api-keys/partner-api-keys.projection';

/** A partner's key as its administrators see it: never the key, its first characters. */
export interface PartnerApiKey {
  keyId: string;
  name: string;
  prefix: string | null;
  /** null: a key made before events said when (the view gives its registration's time). */
  issuedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  state: KeyState;
}

export interface PartnerSummary {
  partnerId: string;
  name: string;
  role: PartnerRole;
  username: string;
  requestsPerMinute: number | null;
  registeredAt: string;
  /** Keys that work now (live or expiring). */
  workingKeys: number;
  /** The live partner whose sandbox this is; null for a live account. */
  sandboxOf: string | null;
}

type KeyFacts = Omit<PartnerApiKey, 'state'>;

const withState = ({ keyId, name, prefix, issuedAt, expiresAt, revokedAt }: KeyFacts, now: Date): PartnerApiKey => ({
  keyId,
  name,
  prefix,
  issuedAt,
  expiresAt,
  revokedAt,
  state: keyState({ revokedAt, expiresAt }, now),
});

/** A partner's keys, oldest first, with their state at `now`. */
export async function partnerApiKeys(views: ViewStore, partnerId: string, now: Date): Promise<PartnerApiKey[]> {
  const keys = await views.find<PartnerApiKeyView>(PARTNER_API_KEYS, { partnerId }, { sort: { issuedAt: 1 } });
  return keys.map((key) => withState(key, now));
}

/** What a partner set of how the service treats its coupons. */
export interface PartnerSettings {
  /** Hours after a redemption it may be rolled back (0: never). */
  rollbackWindowHours: number;
  /** Whether that is the service's default (the partner set none). */
  rollbackWindowIsDefault: boolean;
}

/** What operators and a partner's administrators read of partners and their keys. */
@Injectable()
export class PartnerQueries {
  constructor(
    private readonly views: ViewStore,
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async partners(): Promise<PartnerSummary[]> {
    const [accounts, keys] = await Promise.all([
      this.views.find<PartnerAccount>(PARTNER_ACCOUNTS, {}, { sort: { registeredAt: 1 } }),
      this.views.find<PartnerApiKeyView>(PARTNER_API_KEYS, {}),
    ]);
    const now = this.clock.now();
    const working = new Map<string, number>();
    for (const key of keys)
      if (['live', 'expiring'].includes(keyState(key, now))) working.set(key.partnerId, (working.get(key.partnerId) ?? 0) + 1);
    return accounts.map((a) => ({
      partnerId: a._id,
      name: a.name,
      role: a.role,
      username: a.username,
      requestsPerMinute: a.requestsPerMinute,
      registeredAt: a.registeredAt,
      workingKeys: working.get(a._id) ?? 0,
      sandboxOf: a.sandboxOf ?? null,
    }));
  }

  /** The partner's keys as its stream holds them (not the views, which may lag behind a CLI run). */
  async keys(partnerId: string): Promise<PartnerApiKey[]> {
    const { state } = await loadAggregate(this.store, partnerStream(partnerId), partnerDecider);
    if (state.status !== 'registered') throw new NotFound('partner not found');
    const now = this.clock.now();
    return Object.entries(state.keys).map(([keyId, key]) => withState({ keyId, ...key }, now));
  }

  /** The partner's settings as its stream holds them (a change applies to the next request). */
  async settings(partnerId: string): Promise<PartnerSettings> {
    const { state } = await loadAggregate(this.store, partnerStream(partnerId), partnerDecider);
    if (state.status !== 'registered') throw new NotFound('partner not found');
    return {
      rollbackWindowHours: state.rollbackWindowHours ?? DEFAULT_ROLLBACK_WINDOW_HOURS,
      rollbackWindowIsDefault: state.rollbackWindowHours === null,
    };
  }

  /** The key of the partner whose id or shown prefix is `idOrPrefix`. */
  async keyOf(partnerId: string, idOrPrefix: string): Promise<PartnerApiKey> {
    const keys = await this.keys(partnerId);
    const found = keys.filter((k) => k.keyId === idOrPrefix || k.prefix === idOrPrefix);
    // eslint-disable-next-line no-restricted-syntax -- a count of keys the service holds
    if (found.length > 1) throw new NotFound(`the api key prefix names ${found.length} keys of the partner: give its id`);
    if (found.length === 0) throw new NotFound('api key not found for the partner');
    return found[0];
  }
}
