import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { MAX_WORKING_KEYS, partnerDecider } from './partner.decider';
import { PartnerEvent } from './partner.events';

const given = deciderSpec(partnerDecider);
const NOW = new Date('2026-01-01T00:00:00Z');
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs).toISOString();
const HOUR = 3_600_000;

const registered: PartnerEvent = {
  type: 'PartnerRegistered',
  data: {
    partnerId: 'p1',
    name: 'Acme',
    role: 'partner',
    apiKeyHash: 'h0',
    apiKeyId: 'k0',
    apiKeyPrefix: 'dk_aaaaaaaaa',
    username: 'acme-1',
    passwordHash: 'ph0',
    issuedAt: at(0),
  },
};
const issuedEvent = (keyId: string, name = 'key', issuedAt = at(0)): PartnerEvent => ({
  type: 'PartnerApiKeyIssued',
  data: { partnerId: 'p1', keyId, keyHash: `h-${keyId}`, prefix: `dk_${keyId}`, name, issuedAt },
});
const newKey = (keyId: string) => ({ partnerId: 'p1', keyId, keyHash: `h-${keyId}`, prefix: `dk_${keyId}` });
const rotate = (oldKeyId: string | null, oldExpiresAt: string, name?: string) => ({
  type: 'RotatePartnerApiKey' as const,
  data: { ...newKey('k1'), oldKeyId, oldExpiresAt, ...(name ? { name } : {}) },
});

describe('partner decider: credentials with a life cycle', () => {
  it('rotates the one live key: a new key under the old name, the old one expiring when asked', () =>
    given([registered])
      .when(rotate(null, at(24 * HOUR)), NOW)
      .then([
        { type: 'PartnerApiKeyIssued', data: { ...newKey('k1'), name: 'first key', issuedAt: at(0) } },
        { type: 'PartnerApiKeyExpirySet', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', expiresAt: at(24 * HOUR) } },
      ]));

  it('revokes a compromised key at once: an expiry now or in the past is a revocation, even at the limit of keys', () => {
    const revokedNow = [
      { type: 'PartnerApiKeyIssued', data: { ...newKey('k1'), name: 'production', issuedAt: at(0) } },
      { type: 'PartnerApiKeyRevoked', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', revokedAt: at(0) } },
    ];
    given([registered])
      .when(rotate('k0', at(-HOUR), 'production'), NOW)
      .then(revokedNow as PartnerEvent[]);
    const many = Array.from({ length: MAX_WORKING_KEYS - 1 }, (_, i) => issuedEvent(`k${i + 10}`));
    given([registered, ...many])
      .when(rotate('k0', at(0), 'production'), NOW)
      .then(revokedNow as PartnerEvent[]);
  });

  it('never lengthens an expiry already set', () => {
    const expiring: PartnerEvent = {
      type: 'PartnerApiKeyExpirySet',
      data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', expiresAt: at(HOUR) },
    };
    given([registered, expiring])
      .when(rotate('k0', at(48 * HOUR)), NOW)
      .then([
        { type: 'PartnerApiKeyIssued', data: { ...newKey('k1'), name: 'first key', issuedAt: at(0) } },
        { type: 'PartnerApiKeyExpirySet', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', expiresAt: at(HOUR) } },
      ]);
  });

  it('asks which key to rotate when several are live, and refuses a revoked or expired one', () => {
    given([registered, issuedEvent('k2')])
      .when(rotate(null, at(HOUR)), NOW)
      .thenThrows(ValidationFailed, {
        issues: [expect.objectContaining({ message: expect.stringContaining('must be named: the partner holds 2 live keys') })],
      });
    const revoked: PartnerEvent = { type: 'PartnerApiKeyRevoked', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', revokedAt: at(0) } };
    given([registered, revoked])
      .when(rotate('k0', at(HOUR)), NOW)
      .thenThrows(ValidationFailed);
    const expired: PartnerEvent = {
      type: 'PartnerApiKeyExpirySet',
      data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', expiresAt: at(0) },
    };
    given([registered, expired])
      .when(rotate('k0', at(HOUR)), new Date(NOW.getTime() + 1))
      .thenThrows(ValidationFailed);
    given([registered])
      .when(rotate('nope', at(HOUR)), NOW)
      .thenThrows(NotFound);
  });

  it('rotating when no key is live issues one', () => {
    const revoked: PartnerEvent = { type: 'PartnerApiKeyRevoked', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', revokedAt: at(0) } };
    given([registered, revoked])
      .when(rotate(null, at(HOUR)), NOW)
      .then([{ type: 'PartnerApiKeyIssued', data: { ...newKey('k1'), name: 'key', issuedAt: at(0) } }]);
  });

  it(`holds at most ${MAX_WORKING_KEYS} working keys, counting a rotation's new key before its old one ends`, () => {
    const many = Array.from({ length: MAX_WORKING_KEYS - 1 }, (_, i) => issuedEvent(`k${i + 10}`));
    given([registered, ...many])
      .when({ type: 'IssuePartnerApiKey', data: newKey('k1') }, NOW)
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ message: expect.stringContaining('revoke one first') })] });
    given([registered, ...many])
      .when(rotate('k0', at(HOUR)), NOW)
      .thenThrows(ValidationFailed);
  });

  it('revokes at once, once; renames; refuses an unknown key or partner', () => {
    given([registered])
      .when({ type: 'RevokePartnerApiKey', data: { partnerId: 'p1', keyId: 'k0' } }, NOW)
      .then([{ type: 'PartnerApiKeyRevoked', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', revokedAt: at(0) } }]);
    const revoked: PartnerEvent = { type: 'PartnerApiKeyRevoked', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', revokedAt: at(0) } };
    given([registered, revoked])
      .when({ type: 'RevokePartnerApiKey', data: { partnerId: 'p1', keyId: 'k0' } }, NOW)
      .then([]);
    given([registered])
      .when({ type: 'RenamePartnerApiKey', data: { partnerId: 'p1', keyId: 'k0', name: ' ci ' } }, NOW)
      .then([{ type: 'PartnerApiKeyRenamed', data: { partnerId: 'p1', keyId: 'k0', keyHash: 'h0', name: 'ci' } }]);
    given([registered])
      .when({ type: 'RenamePartnerApiKey', data: { partnerId: 'p1', keyId: 'k0', name: 'bad\u001b[2J' } }, NOW)
      .thenThrows(ValidationFailed);
    given([registered])
      .when({ type: 'RevokePartnerApiKey', data: { partnerId: 'p1', keyId: 'zz' } }, NOW)
      .thenThrows(NotFound);
    given([])
      .when({ type: 'RevokePartnerApiKey', data: { partnerId: 'p1', keyId: 'k0' } }, NOW)
      .thenThrows(NotFound);
  });

  it('rotates the v3 password with a grace period for the old one', () =>
    given([registered])
      .when({ type: 'RotatePartnerPassword', data: { partnerId: 'p1', passwordHash: 'ph1', previousExpiresAt: at(24 * HOUR) } }, NOW)
      .then([
        {
          type: 'PartnerPasswordRotated',
          data: { partnerId: 'p1', passwordHash: 'ph1', issuedAt: at(0), previousExpiresAt: at(24 * HOUR) },
        },
      ]));
});

describe('partner decider: settings', () => {
  const window = (hours: unknown) => ({
    type: 'ChangePartnerRollbackWindow' as const,
    data: { partnerId: 'p1', hours: hours as number | null },
  });
  const changed = (hours: number | null): PartnerEvent => ({ type: 'PartnerRollbackWindowChanged', data: { partnerId: 'p1', hours } });

  it('sets the redemption rollback window in whole hours from 0 to 720, back to the default with null, nothing when unchanged', () => {
    given([registered])
      .when(window(1), NOW)
      .then([changed(1)]);
    given([registered])
      .when(window(0), NOW)
      .then([changed(0)]);
    given([registered])
      .when(window(720), NOW)
      .then([changed(720)]);
    given([registered, changed(48)])
      .when(window(null), NOW)
      .then([changed(null)]);
    given([registered, changed(48)])
      .when(window(48), NOW)
      .then([]);
    given([registered]).when(window(null), NOW).then([]);
  });

  it('refuses a window that is not a whole number of hours from 0 to 720, and an unknown partner', () => {
    for (const hours of [-1, 721, 1.5, Number.NaN, '24'])
      given([registered]).when(window(hours), NOW).thenThrows(ValidationFailed, {
        message: 'redemption_rollback_window_hours must be a whole number of hours from 0 to 720, or null for the default',
      });
    given([]).when(window(24), NOW).thenThrows(NotFound);
  });
});

describe('partner decider: sandboxes', () => {
  const register = (data: Record<string, unknown>) => ({
    type: 'RegisterPartner' as const,
    data: { ...(registered.data as object), ...data } as never,
  });

  it("registers a sandbox under its live partner's id with `_test` after it, as a partner", () =>
    given([])
      .when(register({ partnerId: 'p1_test', sandboxOf: 'p1' }), NOW)
      .then([{ ...registered, data: { ...registered.data, partnerId: 'p1_test', sandboxOf: 'p1' } } as PartnerEvent]));

  it('refuses a sandbox under another id, or as an auditor', () => {
    for (const data of [
      { partnerId: 'p2_test', sandboxOf: 'p1' },
      { partnerId: 'p1', sandboxOf: 'p1' },
      { partnerId: 'p1_test', sandboxOf: 'p1', role: 'auditor' },
    ])
      given([]).when(register(data), NOW).thenThrows(ValidationFailed, { message: "id is not the sandbox's of its live partner" });
  });
});
