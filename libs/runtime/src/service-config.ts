import { resolve } from 'node:path';

/** Everything the service reads from its environment, parsed once at start. */
/** (An abstract class so that it is also the injection token.) */
export abstract class ServiceConfig {
  abstract readonly dataDir: string;
  abstract readonly port: number;
  abstract readonly host: string;
  /** This API's own address, for links to what it serves (`next_page`, coupon pages). */
  abstract readonly publicBaseUrl: string;
  /** The partner-facing site that shows deal pages (`show_url`, `purchase_url`). */
  abstract readonly siteBaseUrl: string;
  /** Where deal images are served (`image_url_abs`, `primary_image`). */
  abstract readonly imageBaseUrl: string;
  abstract readonly eventStoreUrl: string | null;
  /** `postgres://...`: the event log and the views on PostgreSQL (the views stay on MongoDB when MONGO_URL is set). */
  abstract readonly databaseUrl: string | null;
  abstract readonly mongoUrl: string | null;
  abstract readonly mongoDb: string;
  abstract readonly redisUrl: string | null;
  abstract readonly redisPrefix: string;
  abstract readonly demoData: boolean;
  abstract readonly tlsCertFile: string | null;
  abstract readonly tlsKeyFile: string | null;
  /** Trust `X-Forwarded-Proto: https` from a TLS-terminating proxy and serve plain HTTP behind it. */
  abstract readonly behindTlsProxy: boolean;
  /** Behind the TLS proxy: how many proxies of the service's own a request passes (each appends to `X-Forwarded-For`); the entry before theirs is the client's. */
  abstract readonly trustedProxyHops: number;
  /** Whether this process keeps the views up to date (embedded: the API; distributed: the worker). */
  abstract readonly runProjections: boolean;
  /**
   * Longest wait of an answer for the views to show its own write. Longer than a killed keeper's
   * leases take to lapse plus a worker's start, so that answers made while the only worker is
   * restarted, or its views move to another, wait for them rather than answer 503.
   */
  abstract readonly readYourWritesTimeoutMs: number;
  /** Credit a new user gets when the partner gives no `credits` (cents). */
  abstract readonly signupCreditCents: number;
  /** How long before a card link was made a transaction may be dated and still count (`PUT /card_links/:id/redeem`), seconds. */
  abstract readonly cardLinkClockSkewS: number;
  /** Whether live calls may store the published test cards: on while the one processor is the simulated one. */
  abstract readonly liveTakesTestCards: boolean;
  /** How long the simulated processor's slow test card (4000000000000259) takes, in ms. */
  abstract readonly slowCardMs: number;
  /** `smtp://host:port` or `smtps://user:pass@host:port`; null: emails go to `DATA_DIR/outbox`. */
  abstract readonly smtpUrl: string | null;
  abstract readonly mailFrom: string;
  abstract readonly mailReplyTo: string | null;
  /** How often the sweep that records coupons' expiries (`CouponExpired`) runs, in ms. */
  abstract readonly couponExpirySweepMs: number;
  /** How often the log's new events are sealed under a signed checkpoint (`SEAL_EVERY_MS`). */
  abstract readonly sealEveryMs: number;
  /** The local hour (0-23, in each region's time zone) of the daily regional email. */
  abstract readonly digestHour: number;
  /** Connections open at once past which a new one is closed as soon as it is accepted. */
  abstract readonly maxConnections: number;
  /** How long after it opens a connection must have finished its TLS handshake (one that sends nothing included). */
  abstract readonly handshakeTimeoutMs: number;
  /** How long a stop waits for the requests in flight to be answered (SIGTERM, SIGINT). */
  abstract readonly shutdownGraceMs: number;
  /** Request budgets and the limit on wrong credentials (off: no limit at all). */
  abstract readonly rateLimits: boolean;
  /** A partner's budget when it has none of its own (`partners:update --rate-limit`), requests a minute. */
  abstract readonly rateLimitPerMinute: number;
  /** The budget of one user's access tokens, requests a minute (their partner's budget counts them too). */
  abstract readonly userTokenRateLimitPerMinute: number;
  /** Wrong credentials from one client address, then from one account (username, key prefix), in 10 minutes before a 15-minute refusal. */
  abstract readonly authFailuresPerAddress: number;
  abstract readonly authFailuresPerAccount: number;
  /** Count and serve the process's metrics (off: none are kept, `/metrics` is not served). */
  abstract readonly metrics: boolean;
  /** Serve `/metrics` on this port, plain HTTP and without credentials (a private network); null: on the API's port, behind the operator's credentials. */
  abstract readonly metricsPort: number | null;
  /** The password of the operator's credentials (`operator` and this, HTTP basic) for `/metrics` and `/admin/queues`; null: the installation's own (`operator:password`). */
  abstract readonly operatorPassword: string | null;
  /** Let webhook endpoints name private, loopback and link-local addresses (tests, a private network). */
  abstract readonly webhookAllowPrivateAddresses: boolean;
  /** The waits between a webhook delivery's attempts, in ms (the first attempt is at once). */
  abstract readonly webhookRetryDelaysMs: number[];
  /** How long a receiver has to answer a webhook (connection, TLS and status line), in ms. */
  abstract readonly webhookTimeoutMs: number;
  /** How long a request's `Idempotency-Key` and its answer are kept, in hours (at least 24). */
  abstract readonly idempotencyKeyHours: number;
  /** What one partner's kept keys and answers may take up, in MB; past it, their answers are not kept for repeats. */
  abstract readonly idempotencyMaxMbPerPartner: number;
  abstract readonly logLevel: string;
  /** Append logs to this file instead of stdout. */
  abstract readonly logFile: string | null;
}

export class ConfigError extends Error {}

const text = (value: string | undefined) => (value === undefined || value.trim() === '' ? null : value.trim());

function integer(name: string, value: string | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = text(value);
  if (v === null) return fallback;
  // Decimal digits only: Number() would also read 0x10f0, 1e3 and 0b1.
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n > max)
    throw new ConfigError(
      `${name} must be a whole number${max < Number.MAX_SAFE_INTEGER ? ` up to ${max}` : ''}, got ${JSON.stringify(value)}`,
    );
  return n;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  const n = integer(name, value, fallback);
  if (n < 1) throw new ConfigError(`${name} must be at least 1, got ${JSON.stringify(value)}`);
  return n;
}

function atLeast(name: string, value: string | undefined, min: number, max: number): number {
  const n = integer(name, value, min, max);
  if (n < min) throw new ConfigError(`${name} must be at least ${min}, got ${JSON.stringify(value)}`);
  return n;
}

function operatorPassword(value: string | undefined): string | null {
  const v = text(value);
  if (v !== null && v.length < 16) throw new ConfigError('OPERATOR_PASSWORD must be at least 16 characters');
  return v;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function oneOf(name: string, value: string | undefined, allowed: string[], fallback: string): string {
  const v = text(value);
  if (v === null) return fallback;
  if (!allowed.includes(v)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return v;
}

/** A base URL the service writes into links: http(s), with a host. */
function baseUrl(name: string, value: string | undefined, fallback: string): string {
  const v = url(name, value, ['https', 'http']) ?? fallback;
  try {
    if (!new URL(v).host) throw new Error('no host');
  } catch {
    throw new ConfigError(`${name} must be a URL with a host, got ${JSON.stringify(value)}`);
  }
  return v.replace(/\/$/, '');
}

function flag(name: string, value: string | undefined, fallback: boolean): boolean {
  const v = text(value)?.toLowerCase();
  if (v === undefined || v === null) return fallback;
  if (['1', 'true', 'on', 'yes'].includes(v)) return true;
  if (['0', 'false', 'off', 'no'].includes(v)) return false;
  throw new ConfigError(`${name} must be on or off, got ${JSON.stringify(value)}`);
}

function url(name: string, value: string | undefined, schemes: string[]): string | null {
  const v = text(value);
  if (v === null) return null;
  const scheme = v.split('://')[0];
  if (!schemes.includes(scheme)) throw new ConfigError(`${name} must start with ${schemes.map((s) => `${s}://`).join(' or ')}`);
  return v;
}

/** Standard Webhooks' retry schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts in all). */
const DEFAULT_WEBHOOK_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** Waits in ms, comma-separated: `100,200,400`. */
function delays(name: string, value: string | undefined, fallback: number[]): number[] {
  const v = text(value);
  if (v === null) return fallback;
  const parts = v.split(',').map((p) => p.trim());
  if (parts.length > 20 || !parts.every((p) => /^\d{1,9}$/.test(p)))
    throw new ConfigError(`${name} must be up to 20 waits in ms, comma-separated (5000,300000), got ${JSON.stringify(value)}`);
  return parts.map(Number);
}

/** Reads and checks the configuration; a bad value stops the start with a message naming it. */
export function loadServiceConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const port = integer('PORT', env.PORT, 3000, 65_535);
  const tlsCertFile = text(env.TLS_CERT_FILE);
  const tlsKeyFile = text(env.TLS_KEY_FILE);
  if ((tlsCertFile === null) !== (tlsKeyFile === null))
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE go together: give both, or neither for the self-signed certificate');
  const eventStoreUrl = url('EVENTSTORE_URL', env.EVENTSTORE_URL, ['esdb', 'esdb+discover']);
  const mongoUrl = url('MONGO_URL', env.MONGO_URL, ['mongodb', 'mongodb+srv']);
  const databaseUrl = url('DATABASE_URL', env.DATABASE_URL, ['postgres', 'postgresql']);
  // Shared views: the worker keeps them, the API replicas read them.
  const distributed = mongoUrl !== null || databaseUrl !== null;
  const siteBaseUrl = baseUrl('SITE_BASE_URL', env.SITE_BASE_URL, 'https://deals.example.com');
  const publicBaseUrl = baseUrl('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL, `https://localhost:${port}`);
  const demoData = flag('DEMO_DATA', env.DEMO_DATA, true);
  return {
    dataDir: resolve(text(env.DATA_DIR) ?? './data'),
    port,
    host: text(env.HOST) ?? '0.0.0.0',
    publicBaseUrl,
    siteBaseUrl,
    // With the demo catalogue, its pictures are the service's own (drawn at /images/deals/).
    imageBaseUrl: baseUrl('IMAGE_BASE_URL', env.IMAGE_BASE_URL, demoData ? publicBaseUrl : siteBaseUrl),
    eventStoreUrl,
    databaseUrl,
    mongoUrl,
    mongoDb: text(env.MONGO_DB) ?? 'deals',
    redisUrl: url('REDIS_URL', env.REDIS_URL, ['redis', 'rediss']),
    redisPrefix: text(env.REDIS_PREFIX) ?? 'deals',
    demoData,
    tlsCertFile,
    tlsKeyFile,
    behindTlsProxy: flag('BEHIND_TLS_PROXY', env.BEHIND_TLS_PROXY, false),
    trustedProxyHops: atLeast('TRUSTED_PROXY_HOPS', env.TRUSTED_PROXY_HOPS, 1, 16),
    runProjections: flag('RUN_PROJECTIONS', env.RUN_PROJECTIONS, !distributed),
    readYourWritesTimeoutMs: integer('READ_YOUR_WRITES_TIMEOUT_MS', env.READ_YOUR_WRITES_TIMEOUT_MS, 10_000),
    signupCreditCents: integer('SIGNUP_CREDIT_CENTS', env.SIGNUP_CREDIT_CENTS, 500),
    slowCardMs: integer('SLOW_CARD_MS', env.SLOW_CARD_MS, 3000),
    liveTakesTestCards: oneOf('TEST_CARDS_IN_LIVE', env.TEST_CARDS_IN_LIVE, ['allow', 'refuse'], 'allow') === 'allow',
    cardLinkClockSkewS: integer('CARD_LINK_CLOCK_SKEW_S', env.CARD_LINK_CLOCK_SKEW_S, 300),
    smtpUrl: url('SMTP_URL', env.SMTP_URL, ['smtp', 'smtps']),
    mailFrom: text(env.MAIL_FROM) ?? 'Deals <deals@deals.example.com>',
    mailReplyTo: text(env.MAIL_REPLY_TO),
    digestHour: integer('DIGEST_HOUR', env.DIGEST_HOUR, 7, 23),
    couponExpirySweepMs: positive('COUPON_EXPIRY_SWEEP_MS', env.COUPON_EXPIRY_SWEEP_MS, 600_000),
    sealEveryMs: positive('SEAL_EVERY_MS', env.SEAL_EVERY_MS, 10_000),
    maxConnections: positive('MAX_CONNECTIONS', env.MAX_CONNECTIONS, 10_000),
    handshakeTimeoutMs: positive('HANDSHAKE_TIMEOUT_MS', env.HANDSHAKE_TIMEOUT_MS, 10_000),
    shutdownGraceMs: integer('SHUTDOWN_GRACE_MS', env.SHUTDOWN_GRACE_MS, 25_000),
    rateLimits: flag('RATE_LIMITS', env.RATE_LIMITS, true),
    rateLimitPerMinute: positive('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 6000),
    userTokenRateLimitPerMinute: positive('USER_TOKEN_RATE_LIMIT_PER_MINUTE', env.USER_TOKEN_RATE_LIMIT_PER_MINUTE, 600),
    authFailuresPerAddress: positive('AUTH_FAILURES_PER_ADDRESS', env.AUTH_FAILURES_PER_ADDRESS, 30),
    authFailuresPerAccount: positive('AUTH_FAILURES_PER_ACCOUNT', env.AUTH_FAILURES_PER_ACCOUNT, 10),
    metrics: flag('METRICS', env.METRICS, true),
    metricsPort: text(env.METRICS_PORT) === null ? null : integer('METRICS_PORT', env.METRICS_PORT, 0, 65_535),
    operatorPassword: operatorPassword(env.OPERATOR_PASSWORD),
    webhookAllowPrivateAddresses: flag('WEBHOOK_ALLOW_PRIVATE_ADDRESSES', env.WEBHOOK_ALLOW_PRIVATE_ADDRESSES, false),
    webhookRetryDelaysMs: delays('WEBHOOK_RETRY_DELAYS_MS', env.WEBHOOK_RETRY_DELAYS_MS, DEFAULT_WEBHOOK_RETRY_DELAYS_MS),
    webhookTimeoutMs: positive('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, 10_000),
    idempotencyKeyHours: atLeast('IDEMPOTENCY_KEY_HOURS', env.IDEMPOTENCY_KEY_HOURS, 24, 24 * 366),
    idempotencyMaxMbPerPartner: positive('IDEMPOTENCY_MAX_MB_PER_PARTNER', env.IDEMPOTENCY_MAX_MB_PER_PARTNER, 2048),
    logLevel: oneOf('LOG_LEVEL', env.LOG_LEVEL, LOG_LEVELS, 'info'),
    logFile: text(env.LOG_FILE),
  };
}
