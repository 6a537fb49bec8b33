import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { errorBody } from './error-body';
import type { AuthenticatedRequest, UserTokenRef } from './authenticated-request';

export interface RequestLimitSettings {
  /** A partner's budget when it has none of its own, in requests a minute. */
  partnerPerMinute: number;
  /** The budget of one user's access tokens (besides their partner's), in requests a minute. */
  userTokenPerMinute: number;
  /** Wrong credentials from one client address in {@link FAILURE_WINDOW_SECONDS} answered 401; those after it, 429. */
  failuresPerAddress: number;
  /** Wrong credentials for one username, key prefix or token prefix in the same window answered 401; those after it, 429. */
  failuresPerIdentity: number;
}

const WINDOW_SECONDS = 60;

/** The fields of draft-ietf-httpapi-ratelimit-headers, on every answer of a counted request: each budget's size, and what is left of it. */
export const RATE_LIMIT_POLICY_HEADER = 'ratelimit-policy';
export const RATE_LIMIT_HEADER = 'ratelimit';
/** The policies the fields name: the partner's budget, and the budget of a user's access tokens. */
export const PARTNER_POLICY = 'partner';
export const USER_TOKEN_POLICY = 'user';
export const FAILURE_WINDOW_SECONDS = 600;
/** The longest delay a failing caller is told to wait. */
export const MAX_DELAY_SECONDS = 900;
/** Characters of an API key or token that name it for the failure count: enough to tell real keys apart, too few to help a guess. */
const KEY_PREFIX = 8;

/**
 * A counter store: in this process, or on Redis so that replicas share every budget. A key is
 * forgotten `duration` seconds after its first count (a fixed window), or, `sliding`, after its
 * last count (a key counted again and again is kept until it has been left alone that long).
 */
export type CounterFactory = (options: {
  keyPrefix: string;
  points: number;
  duration: number;
  blockDuration?: number;
  sliding?: boolean;
}) => RateLimiterAbstract;

export const memoryCounters: CounterFactory = ({ sliding, ...options }) =>
  sliding ? new SlidingMemoryCounter(options) : new RateLimiterMemory(options);

/** Counters on Redis; while Redis does not answer, each process counts on its own (the insurance limiter). */
const redisCounters =
  (client: Redis, prefix: string): CounterFactory =>
  ({ sliding, ...options }) => {
    const redis = {
      ...options,
      keyPrefix: `${prefix}:rl:${options.keyPrefix}`,
      storeClient: client,
      insuranceLimiter: memoryCounters({ ...options, sliding }),
    };
    return sliding ? new SlidingRedisCounter(redis) : new RateLimiterRedis(redis);
  };

/** RateLimiterMemory's store: synchronous, so a count and its new expiry are one step for every other caller. */
interface MemoryStore {
  get(key: string): RateLimiterRes | null;
  set(key: string, value: number, durationSec: number): RateLimiterRes;
}

/** A memory counter whose key expires `duration` after its last count: each count re-sets the expiry. */
class SlidingMemoryCounter extends RateLimiterMemory {
  override consume(key: string | number, points = 1, options: Record<string, unknown> = {}): Promise<RateLimiterRes> {
    const counted = super.consume(key, points, options);
    // The count above is made when consume is called, not when its promise settles: the expiry is
    // re-set in the same step, before another call can read or count the key.
    const store = (this as unknown as { _memoryStorage: MemoryStore })._memoryStorage;
    const rlKey = this.getKey(key);
    const now = store.get(rlKey);
    // A key past its points may be blocked for blockDuration: that expiry stays.
    if (points <= 0 || now === null || now.consumedPoints > this.points) return counted;
    store.set(rlKey, now.consumedPoints, this.duration);
    // Its answer tells the new expiry.
    const renewed = (res: unknown) =>
      res instanceof RateLimiterRes
        ? new RateLimiterRes(res.remainingPoints, this.duration * 1000, res.consumedPoints, res.isFirstInDuration)
        : res;
    return counted.then(renewed as (res: RateLimiterRes) => RateLimiterRes, (refused: unknown) => Promise.reject(renewed(refused)));
  }
}

/** Counts and re-sets the key's expiry in one script: atomic for every replica. */
const SLIDING_INCREMENT = `redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
if tonumber(ARGV[1]) > 0 then redis.call('expire', KEYS[1], ARGV[2]) end
return {consumed, redis.call('pttl', KEYS[1])}`;

type SlidingClient = Redis & { dealsSlidingIncrement?: (key: string, points: string, seconds: string) => Promise<[number, number]> };

/**
 * A Redis counter whose key expires `duration` after its last count. Its script is a command of its
 * own on the client (not the library's `customIncrTtlLuaScript`, which would replace the script of
 * every counter sharing the client, the fixed-window ones too).
 */
class SlidingRedisCounter extends RateLimiterRedis {
  constructor(options: ConstructorParameters<typeof RateLimiterRedis>[0] & { storeClient: SlidingClient }) {
    super(options);
    const client = options.storeClient;
    if (typeof client.dealsSlidingIncrement !== 'function')
      client.defineCommand('dealsSlidingIncrement', { numberOfKeys: 1, lua: SLIDING_INCREMENT });
  }

  /** The library's write of a count (consume, penalty, reward); a forced write (set, block) stays the library's. */
  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<unknown> {
    const seconds = Math.floor(msDuration / 1000);
    const base = RateLimiterRedis.prototype as unknown as {
      _upsert(this: RateLimiterRedis, key: string, points: number, ms: number, force: boolean): Promise<unknown>;
    };
    if (forceExpire || seconds <= 0 || !Number.isInteger(points)) return base._upsert.call(this, rlKey, points, msDuration, forceExpire);
    const client = (this as unknown as { client: SlidingClient }).client;
    return client.dealsSlidingIncrement!(rlKey, String(points), String(seconds));
  }
}

/** A refusal: how long until the caller may ask again. */
export interface Refusal {
  retryAfterMs: number;
  message: string;
}

/**
 * The request budgets (per partner, and per user of an access token) and the throttle on wrong
 * credentials (per client address and per username or key prefix). Budgets count in fixed
 * one-minute windows; a caller over one is refused until its window ends.
 */
export class RequestLimits {
  private readonly requests: RateLimiterAbstract;
  private readonly failuresByAddress: RateLimiterAbstract;
  private readonly failuresByIdentity: RateLimiterAbstract;
  /** RateLimit-Policy values by policy name and budget: they depend on nothing else, so each is made once. */
  private readonly policies = new Map<string, Map<number, string>>();
  /** The RateLimit-Policy value of a user's access tokens' budget. */
  private readonly userPolicy: string;

  private constructor(
    readonly settings: RequestLimitSettings,
    /** Where these limits count: other limits of the service (the partner site's throttle of passwords and links) count there too. */
    readonly counters: CounterFactory,
  ) {
    // Budgets differ by partner and failures only count: each counter counts, and the callers compare.
    const counting = { points: Number.MAX_SAFE_INTEGER };
    this.requests = counters({ keyPrefix: 'requests', ...counting, duration: WINDOW_SECONDS });
    this.failuresByAddress = counters({ keyPrefix: 'auth-address', ...counting, duration: FAILURE_WINDOW_SECONDS });
    this.failuresByIdentity = counters({ keyPrefix: 'auth-identity', ...counting, duration: FAILURE_WINDOW_SECONDS });
    this.userPolicy = `"${USER_TOKEN_POLICY}";q=${settings.userTokenPerMinute};w=${WINDOW_SECONDS}`;
  }

  static inMemory(settings: RequestLimitSettings): RequestLimits {
    return new RequestLimits(settings, memoryCounters);
  }

  static onRedis(settings: RequestLimitSettings, client: Redis, prefix: string): RequestLimits {
    return new RequestLimits(settings, redisCounters(client, prefix));
  }

  /**
   * Counts a request of an authenticated caller against its budgets; a refusal when one is spent.
   * `counter`: whose budget of the partner's size it spends (default: the partner's own), and
   * `policy`: the name RateLimit-Policy and RateLimit give that budget. A call refused by one budget
   * spends no other: a user's access token is counted against its own budget first, and against the
   * partner's only when its own lets it through.
   */
  async spend(
    request: AuthenticatedRequest,
    reply: FastifyReply,
    counter = `p:${request.partner!.id}`,
    policy = PARTNER_POLICY,
  ): Promise<Refusal | null> {
    const partner = request.partner!;
    const budget = partner.requestsPerMinute ?? this.settings.partnerPerMinute;
    if (request.userToken) return this.spendAsToken(request.userToken, counter, budget, reply);
    const byPartner = await this.requests.consume(counter);
    tell(reply, this.policyValue(policy, budget), policy, budget, byPartner);
    if (byPartner.consumedPoints <= budget) return null;
    // eslint-disable-next-line no-restricted-syntax -- limits of ours
    return { retryAfterMs: byPartner.msBeforeNext, message: `this partner is over its budget of ${budget} requests a minute` };
  }

  /**
   * A call made with a user's access token: counted against the user's tokens' budget, then (let
   * through) against the partner's; a call either refuses is given back to the user's budget
   * (consume, then reward: each step is atomic in memory and on Redis, so the budgets hold under
   * concurrency and across replicas). The token is told its own budget alone: the partner's id,
   * size and traffic are the partner's business, not its users'.
   */
  private async spendAsToken(token: UserTokenRef, partnerCounter: string, budget: number, reply: FastifyReply): Promise<Refusal | null> {
    const own = this.settings.userTokenPerMinute;
    const userCounter = `u:${token.userId}`;
    const byUser = await this.requests.consume(userCounter);
    if (byUser.consumedPoints > own) {
      tell(reply, this.userPolicy, USER_TOKEN_POLICY, own, byUser);
      // The refused call is given back: a burst of calls in flight, refused by the partner's budget
      // and given back later, would otherwise leave the user's budget spent by calls never served.
      // The partner's budget is read, not spent: a retry before its end would be refused by it.
      const [byPartner] = await Promise.all([this.requests.get(partnerCounter), this.requests.reward(userCounter)]);
      const partnerSpent = byPartner !== null && byPartner.consumedPoints >= budget;
      return {
        retryAfterMs: partnerSpent ? Math.max(byPartner.msBeforeNext, byUser.msBeforeNext) : byUser.msBeforeNext,
        // eslint-disable-next-line no-restricted-syntax -- limits of ours
        message: `the access tokens of this user are over their budget of ${own} requests a minute`,
      };
    }
    const byPartner = await this.requests.consume(partnerCounter);
    if (byPartner.consumedPoints <= budget) {
      tell(reply, this.userPolicy, USER_TOKEN_POLICY, own, byUser);
      return null;
    }
    const givenBack = await this.requests.reward(userCounter);
    tell(reply, this.userPolicy, USER_TOKEN_POLICY, own, givenBack);
    return { retryAfterMs: byPartner.msBeforeNext, message: "this user's partner is over its request budget: try again after Retry-After" };
  }

  /** The RateLimit-Policy value of the budget `policy` of `budget` requests a minute, made once per budget. */
  private policyValue(policy: string, budget: number): string {
    let byBudget = this.policies.get(policy);
    if (!byBudget) this.policies.set(policy, (byBudget = new Map()));
    let value = byBudget.get(budget);
    if (value === undefined) byBudget.set(budget, (value = `"${policy}";q=${budget};w=${WINDOW_SECONDS}`));
    return value;
  }

  /**
   * Counts wrong credentials presented from `address` for `identity`; a refusal once either has
   * failed more often than its limit in the window, telling the caller to wait twice as long for
   * each failure more (up to {@link MAX_DELAY_SECONDS}). Only failing attempts are ever refused:
   * right credentials pass whatever others did from the same address.
   */
  async failed(address: string, identity: string | null): Promise<Refusal | null> {
    const byAddress = await counted(this.failuresByAddress, addressKey(address));
    const addressOver = byAddress.consumedPoints - this.settings.failuresPerAddress;
    // An address already over its limit adds no account to count: one client cannot fill memory (or Redis) with names.
    const byIdentity = identity === null || addressOver > 0 ? null : await counted(this.failuresByIdentity, identity);
    const identityOver = byIdentity === null ? 0 : byIdentity.consumedPoints - this.settings.failuresPerIdentity;
    const excess = Math.max(addressOver, identityOver);
    if (excess <= 0) return null;
    return {
      retryAfterMs: Math.min(MAX_DELAY_SECONDS, 2 ** Math.min(excess - 1, 30)) * 1000,
      message:
        addressOver > 0
          ? 'too many wrong credentials from this address: wait before trying again'
          : 'too many wrong credentials for this account: wait before trying again',
    };
  }

  /** The partner's requests counted in the current window, and when it ends; counts nothing. */
  async partnerWindow(partnerId: string): Promise<{ requests: number; resetsInMs: number }> {
    const counted = await this.requests.get(`p:${partnerId}`);
    return { requests: counted?.consumedPoints ?? 0, resetsInMs: counted?.msBeforeNext ?? 0 };
  }

  /** Whether the address is over its limit of wrong credentials (a refusal), without counting anything. */
  async addressThrottled(address: string): Promise<Refusal | null> {
    const res = await this.failuresByAddress.get(addressKey(address));
    const excess = res === null ? 0 : res.consumedPoints - this.settings.failuresPerAddress;
    if (excess <= 0) return null;
    return {
      retryAfterMs: Math.min(MAX_DELAY_SECONDS * 1000, res!.msBeforeNext),
      message: 'too many wrong credentials from this address: wait before trying again',
    };
  }
}

/**
 * Tells the caller the one budget its call was counted against: RateLimit-Policy and RateLimit on
 * every answer, the refusal included, kept cheap (the policy's value is made once per budget, what
 * is left is one short template); and X-RateLimit-* once a fifth of the budget or less is left: three
 * headers on every answer cost about 5% of the fastest call's throughput (docs/performance.md), and
 * a caller needs them only near the end.
 */
function tell(reply: FastifyReply, policyValue: string, policy: string, budget: number, counted: RateLimiterRes): void {
  const remaining = Math.max(0, budget - counted.consumedPoints);
  void reply.header(RATE_LIMIT_POLICY_HEADER, policyValue);
  void reply.header(RATE_LIMIT_HEADER, `"${policy}";r=${remaining};t=${resetSeconds(counted)}`);
  if (remaining * 5 > budget) return;
  void reply.header('x-ratelimit-limit', budget);
  void reply.header('x-ratelimit-remaining', remaining);
  void reply.header('x-ratelimit-reset', Math.ceil(counted.msBeforeNext / 1000));
}

/** Whole seconds until a counter's window ends, rounded up: when the budget is whole again. */
const resetSeconds = (counted: RateLimiterRes) => Math.max(0, Math.ceil(counted.msBeforeNext / 1000));

/** Counts one failure and returns the count in its window. */
async function counted(counter: RateLimiterAbstract, key: string): Promise<RateLimiterRes> {
  // A consume past the counter's points rejects with its state: a count all the same.
  return counter.consume(key).catch((refused: unknown) => {
    if (refused instanceof RateLimiterRes) return refused;
    throw refused;
  });
}

/**
 * The client address a failure is counted against: an IPv4 address as it is, an IPv6 address by its
 * /64 (one host is given a whole /64, so counting single IPv6 addresses would count nothing).
 */
export function addressKey(address: string): string {
  if (!address.includes(':') || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address)) return address.replace(/^::ffff:/i, '');
  const [head, tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** What names the account a failed attempt aimed at: the username, or a key's or token's first characters. */
export function attemptedIdentity(kind: 'username' | 'api_key' | 'token', value: string): string {
  // A username is named by its hash: a counter's key has one size, whatever a caller sends.
  return kind === 'username'
    ? `user:${createHash('sha256').update(value).digest('base64url').slice(0, 22)}`
    : `${kind}:${value.slice(0, KEY_PREFIX)}`;
}

/** Answers 429 with `Retry-After` (whole seconds, at least 1) and the error body. */
export function refuse(reply: FastifyReply, refusal: Refusal): FastifyReply {
  return reply
    .status(429)
    .header('retry-after', Math.max(1, Math.ceil(refusal.retryAfterMs / 1000)))
    .send(errorBody('rate_limited', refusal.message));
}
