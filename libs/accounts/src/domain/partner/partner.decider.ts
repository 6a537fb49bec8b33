import {
  Decider,
  DomainCommand,
  ignoredEvent,
  isSandbox,
  NotFound,
  sandboxOf,
  unknownCommand,
  ValidationFailed,
  ValidationIssue,
} from '@deals/kernel';
import {
  INITIAL_KEY_ID,
  PARTNER_ROLES,
  PartnerApiKeyIssued,
  PartnerEvent,
  MAX_ROLLBACK_WINDOW_HOURS,
  PartnerRateLimitChanged,
  PartnerRegistered,
  PartnerRole,
  PartnerRollbackWindowChanged,
} from './partner.events';
import { PartnerPassword, passwordsAfterRotation } from './partner-credentials';

export type RegisterPartner = DomainCommand<'RegisterPartner', Omit<PartnerRegistered['data'], 'issuedAt'>>;
export type ChangePartnerRateLimit = DomainCommand<'ChangePartnerRateLimit', PartnerRateLimitChanged['data']>;
export type ChangePartnerRollbackWindow = DomainCommand<'ChangePartnerRollbackWindow', PartnerRollbackWindowChanged['data']>;
/** A new key made by the caller (its secret never enters the command: its hash and shown prefix do). */
type NewKey = Omit<PartnerApiKeyIssued['data'], 'issuedAt' | 'name'> & { name?: string };
export type IssuePartnerApiKey = DomainCommand<'IssuePartnerApiKey', NewKey>;
/** `oldKeyId` null: the partner's one key without an expiry. */
export type RotatePartnerApiKey = DomainCommand<'RotatePartnerApiKey', NewKey & { oldKeyId: string | null; oldExpiresAt: string }>;
export type RevokePartnerApiKey = DomainCommand<'RevokePartnerApiKey', { partnerId: string; keyId: string }>;
export type RenamePartnerApiKey = DomainCommand<'RenamePartnerApiKey', { partnerId: string; keyId: string; name: string }>;
export type RotatePartnerPassword = DomainCommand<
  'RotatePartnerPassword',
  { partnerId: string; passwordHash: string; previousExpiresAt: string }
>;
export type PartnerCommand =
  | RegisterPartner
  | ChangePartnerRateLimit
  | ChangePartnerRollbackWindow
  | IssuePartnerApiKey
  | RotatePartnerApiKey
  | RevokePartnerApiKey
  | RenamePartnerApiKey
  | RotatePartnerPassword;

export interface PartnerKey {
  keyHash: string;
  /** null: a key made before keys had shown prefixes. */
  prefix: string | null;
  name: string;
  /** null: registered before events said when. */
  issuedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

/** A partner's stream: empty, or its registration and what followed. */
export type Partner = { status: 'unregistered' } | RegisteredPartner;

export interface RegisteredPartner {
  status: 'registered';
  /** The name it was registered with. */
  name: string;
  role: PartnerRole;
  requestsPerMinute: number | null;
  /** Hours a redemption may be rolled back (null: the default). */
  rollbackWindowHours: number | null;
  /** The v3 username. */
  username: string;
  /** The v3 passwords' hashes, the current one first (as the accounts view keeps them). */
  passwords: PartnerPassword[];
  keys: Record<string, PartnerKey>;
}

export type KeyState = 'live' | 'expiring' | 'expired' | 'revoked';

/** A key's state at `now`: revoked, expired, working until an expiry (expiring), or live. */
export function keyState(key: { revokedAt: string | null; expiresAt: string | null }, now: Date): KeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt === null) return 'live';
  return Date.parse(key.expiresAt) <= now.getTime() ? 'expired' : 'expiring';
}

/** The largest budget a partner may be given: a million requests a minute is beyond any one process. */
export const MAX_REQUESTS_PER_MINUTE = 10_000_000;
/** Keys a partner may hold working at once (live or expiring): enough for a rotation per environment. */
export const MAX_WORKING_KEYS = 10;
const MAX_KEY_NAME = 100;

function rateLimitIssue(requestsPerMinute: number | null | undefined): ValidationIssue[] {
  if (requestsPerMinute === null || requestsPerMinute === undefined) return [];
  if (Number.isSafeInteger(requestsPerMinute) && requestsPerMinute >= 1 && requestsPerMinute <= MAX_REQUESTS_PER_MINUTE) return [];
  return [
    {
      type: 'invalid',
      resource: 'partner',
      field: 'requests_per_minute',
      message: `must be a whole number from 1 to ${MAX_REQUESTS_PER_MINUTE}`,
    },
  ];
}

const invalidKey = (field: string, message: string) => new ValidationFailed([{ type: 'invalid', resource: 'api_key', field, message }]);

// Shown on the partner site and printed to operators' terminals: no control characters (an ESC sequence would drive the terminal).
function checkedName(name: string, resource: 'partner' | 'api_key', max: number): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationFailed([{ type: 'missing_field', resource, field: 'name', message: 'is required' }]);
  if (trimmed.length > max || /[\p{Cc}\p{Cf}]/u.test(trimmed))
    throw new ValidationFailed([
      // eslint-disable-next-line no-restricted-syntax -- a limit of ours
      { type: 'invalid', resource, field: 'name', message: `must be at most ${max} characters, without control or format characters` },
    ]);
  return trimmed;
}

/** The later of an expiry asked for and now (an expiry in the past means at once), never later than one already set. */
function expiryAt(asked: string, now: Date, current: string | null, field: string): string {
  const at = Date.parse(asked);
  if (!Number.isFinite(at)) throw invalidKey(field, 'must be a date and time');
  const clamped = new Date(Math.max(at, now.getTime())).toISOString();
  return current !== null && Date.parse(current) < Date.parse(clamped) ? current : clamped;
}

/** The partner's key of this id: its own entries only (an id such as `constructor` names none). */
const keyOf = (partner: RegisteredPartner, keyId: string): PartnerKey | undefined =>
  Object.hasOwn(partner.keys, keyId) ? partner.keys[keyId] : undefined;

const workingKeys = (partner: RegisteredPartner, now: Date) =>
  Object.entries(partner.keys).filter(([, key]) => ['live', 'expiring'].includes(keyState(key, now)));

function registered(partner: Partner): RegisteredPartner {
  if (partner.status !== 'registered') throw new NotFound('partner not found');
  return partner;
}

/** `ending`: a key this decision ends at once, not counted against the limit. */
function issued(partner: RegisteredPartner, data: NewKey, name: string, now: Date, ending: string | null = null): PartnerApiKeyIssued {
  if (keyOf(partner, data.keyId)) throw invalidKey('id', 'is already taken');
  if (workingKeys(partner, now).filter(([keyId]) => keyId !== ending).length >= MAX_WORKING_KEYS)
    throw invalidKey('api_key', `the partner already holds ${MAX_WORKING_KEYS} working keys: revoke one first`);
  const { partnerId, keyId, keyHash, prefix } = data;
  return { type: 'PartnerApiKeyIssued', data: { partnerId, keyId, keyHash, prefix, name, issuedAt: now.toISOString() } };
}

/** The key a rotation replaces: the one named, or the partner's one key without an expiry. */
function keyToRotate(partner: RegisteredPartner, oldKeyId: string | null, now: Date): [string, PartnerKey] | null {
  if (oldKeyId !== null) {
    const key = keyOf(partner, oldKeyId);
    if (!key) throw new NotFound('api key not found');
    const state = keyState(key, now);
    if (state === 'revoked' || state === 'expired') throw invalidKey('key', `is ${state}: issue a new key instead`);
    return [oldKeyId, key];
  }
  const live = Object.entries(partner.keys).filter(([, key]) => keyState(key, now) === 'live');
  if (live.length > 1) throw invalidKey('key', `must be named: the partner holds ${live.length} live keys`);
  return live[0] ?? null;
}

function decideRegistration(command: RegisterPartner, partner: Partner, now: Date): PartnerEvent[] {
  if (partner.status === 'registered')
    throw new ValidationFailed([{ type: 'invalid', resource: 'partner', field: 'id', message: 'is already registered' }]);
  const issues: ValidationIssue[] = [];
  try {
    checkedName(command.data.name, 'partner', 200);
  } catch (error) {
    issues.push(...(error as ValidationFailed).issues);
  }
  if (!PARTNER_ROLES.includes(command.data.role))
    issues.push({ type: 'invalid', resource: 'partner', field: 'role', message: `must be one of ${PARTNER_ROLES.join(', ')}` });
  issues.push(...rateLimitIssue(command.data.requestsPerMinute));
  const { sandboxOf: live, partnerId, role } = command.data;
  // A sandbox is named after its live partner and acts as a partner (an auditor has no sandbox).
  if (live !== undefined && (partnerId !== sandboxOf(live) || role !== 'partner'))
    issues.push({ type: 'invalid', resource: 'partner', field: 'id', message: "is not the sandbox's of its live partner" });
  if (live === undefined && isSandbox(partnerId))
    issues.push({ type: 'invalid', resource: 'partner', field: 'id', message: "names a sandbox: a live partner's id cannot" });
  if (issues.length) throw new ValidationFailed(issues);
  return [{ type: 'PartnerRegistered', data: { ...command.data, issuedAt: now.toISOString() } }];
}

function changeRateLimit({ data }: ChangePartnerRateLimit, partner: RegisteredPartner): PartnerEvent[] {
  const issues = rateLimitIssue(data.requestsPerMinute);
  if (issues.length) throw new ValidationFailed(issues);
  return partner.requestsPerMinute === data.requestsPerMinute ? [] : [{ type: 'PartnerRateLimitChanged', data }];
}

function changeRollbackWindow({ data }: ChangePartnerRollbackWindow, partner: RegisteredPartner): PartnerEvent[] {
  const { hours } = data;
  if (hours !== null && !(Number.isSafeInteger(hours) && hours >= 0 && hours <= MAX_ROLLBACK_WINDOW_HOURS))
    throw new ValidationFailed([
      {
        type: 'invalid',
        resource: 'partner_settings',
        field: 'redemption_rollback_window_hours',
        message: `must be a whole number of hours from 0 to ${MAX_ROLLBACK_WINDOW_HOURS}, or null for the default`,
      },
    ]);
  return partner.rollbackWindowHours === hours ? [] : [{ type: 'PartnerRollbackWindowChanged', data }];
}

function issueKey({ data }: IssuePartnerApiKey, partner: RegisteredPartner, now: Date): PartnerEvent[] {
  const count = Object.keys(partner.keys).length + 1;
  return [issued(partner, data, checkedName(data.name ?? `key ${count}`, 'api_key', MAX_KEY_NAME), now)];
}

function rotateKey({ data }: RotatePartnerApiKey, partner: RegisteredPartner, now: Date): PartnerEvent[] {
  const old = keyToRotate(partner, data.oldKeyId, now);
  const name = checkedName(data.name ?? old?.[1].name ?? 'key', 'api_key', MAX_KEY_NAME);
  if (!old) return [issued(partner, data, name, now)];
  const [oldKeyId, oldKey] = old;
  const expiresAt = expiryAt(data.oldExpiresAt, now, oldKey.expiresAt, 'expire_old');
  const ref = { partnerId: data.partnerId, keyId: oldKeyId, keyHash: oldKey.keyHash };
  // Ending the old key at once is a revocation (a leaked key: the access tokens it issued end too).
  if (Date.parse(expiresAt) <= now.getTime())
    return [issued(partner, data, name, now, oldKeyId), { type: 'PartnerApiKeyRevoked', data: { ...ref, revokedAt: expiresAt } }];
  // Otherwise the new key is counted with the old one still working: a rotation at the limit is refused, not half done.
  return [issued(partner, data, name, now), { type: 'PartnerApiKeyExpirySet', data: { ...ref, expiresAt } }];
}

function revokeKey({ data }: RevokePartnerApiKey, partner: RegisteredPartner, now: Date): PartnerEvent[] {
  const key = keyOf(partner, data.keyId);
  if (!key) throw new NotFound('api key not found');
  if (key.revokedAt !== null) return [];
  return [
    {
      type: 'PartnerApiKeyRevoked',
      data: { partnerId: data.partnerId, keyId: data.keyId, keyHash: key.keyHash, revokedAt: now.toISOString() },
    },
  ];
}

function renameKey({ data }: RenamePartnerApiKey, partner: RegisteredPartner): PartnerEvent[] {
  const key = keyOf(partner, data.keyId);
  if (!key) throw new NotFound('api key not found');
  const name = checkedName(data.name, 'api_key', MAX_KEY_NAME);
  return name === key.name
    ? []
    : [{ type: 'PartnerApiKeyRenamed', data: { partnerId: data.partnerId, keyId: data.keyId, keyHash: key.keyHash, name } }];
}

function rotatePassword({ data }: RotatePartnerPassword, now: Date): PartnerEvent[] {
  const previousExpiresAt = expiryAt(data.previousExpiresAt, now, null, 'expire_old');
  const { partnerId, passwordHash } = data;
  return [{ type: 'PartnerPasswordRotated', data: { partnerId, passwordHash, issuedAt: now.toISOString(), previousExpiresAt } }];
}

/** The registered partner with the registration's name, role, credentials and first key. */
function registeredBy({ data }: PartnerRegistered): RegisteredPartner {
  const first: PartnerKey = {
    keyHash: data.apiKeyHash,
    prefix: data.apiKeyPrefix ?? null,
    name: 'first key',
    issuedAt: data.issuedAt ?? null,
    expiresAt: null,
    revokedAt: null,
  };
  return {
    status: 'registered',
    name: data.name,
    role: data.role,
    requestsPerMinute: data.requestsPerMinute ?? null,
    rollbackWindowHours: null,
    username: data.username,
    passwords: [{ hash: data.passwordHash, expiresAt: null }],
    keys: { [data.apiKeyId ?? INITIAL_KEY_ID]: first },
  };
}

/** The partner with its key `keyId` changed; a key it does not hold (no event the decider wrote names one) leaves it as it was. */
function withKey(partner: RegisteredPartner, keyId: string, changed: Partial<PartnerKey>): RegisteredPartner {
  const key = keyOf(partner, keyId);
  return key ? { ...partner, keys: { ...partner.keys, [keyId]: { ...key, ...changed } } } : partner;
}

export const partnerDecider: Decider<Partner, PartnerCommand, PartnerEvent> = {
  initialState: () => ({ status: 'unregistered' }),
  decide(command, partner, now) {
    switch (command.type) {
      case 'RegisterPartner':
        return decideRegistration(command, partner, now);
      case 'ChangePartnerRateLimit':
        return changeRateLimit(command, registered(partner));
      case 'ChangePartnerRollbackWindow':
        return changeRollbackWindow(command, registered(partner));
      case 'IssuePartnerApiKey':
        return issueKey(command, registered(partner), now);
      case 'RotatePartnerApiKey':
        return rotateKey(command, registered(partner), now);
      case 'RevokePartnerApiKey':
        return revokeKey(command, registered(partner), now);
      case 'RenamePartnerApiKey':
        return renameKey(command, registered(partner));
      case 'RotatePartnerPassword':
        registered(partner);
        return rotatePassword(command, now);
      default:
        return unknownCommand(command);
    }
  },
  evolve(partner, event) {
    if (event.type === 'PartnerRegistered') return registeredBy(event);
    // Every other event follows the registration (one before it is none the decider wrote, and is ignored).
    if (partner.status !== 'registered') return partner;
    switch (event.type) {
      case 'PartnerRateLimitChanged':
        return { ...partner, requestsPerMinute: event.data.requestsPerMinute };
      case 'PartnerRollbackWindowChanged':
        return { ...partner, rollbackWindowHours: event.data.hours };
      case 'PartnerApiKeyIssued': {
        const { keyId, keyHash, prefix, name, issuedAt } = event.data;
        return { ...partner, keys: { ...partner.keys, [keyId]: { keyHash, prefix, name, issuedAt, expiresAt: null, revokedAt: null } } };
      }
      case 'PartnerApiKeyExpirySet':
        return withKey(partner, event.data.keyId, { expiresAt: event.data.expiresAt });
      case 'PartnerApiKeyRevoked':
        return withKey(partner, event.data.keyId, { revokedAt: event.data.revokedAt });
      case 'PartnerApiKeyRenamed':
        return withKey(partner, event.data.keyId, { name: event.data.name });
      case 'PartnerPasswordRotated': {
        const { passwordHash, issuedAt: rotatedAt, previousExpiresAt } = event.data;
        return { ...partner, passwords: passwordsAfterRotation(partner.passwords, { passwordHash, rotatedAt, previousExpiresAt }) };
      }
      default:
        return ignoredEvent(event, partner);
    }
  },
};
