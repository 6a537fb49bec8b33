import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { errorBody } from './error-body';
import type { AuthenticatedRequest } from './partner-auth.guard';

export interface RequestLimitSettings {
  /** A partner's budget when it has none of its own, in requests a minute. */
  partnerPerMinute: number;
  /** The budget of one user's access tokens (besides their partner's), in requests a minute. */
  userTokenPerMinute: number;
  /** Wrong credentials from one client address in {@link FAILURE_WINDOW_SECONDS} that refuse it for {@link BLOCK_SECONDS}. */
  failuresPerAddress: number;
  /** Wrong credentials for one username, key prefix or token prefix in the same window that refuse it likewise. */
  failuresPerIdentity: number;
}

const WINDOW_SECONDS = 60;
export const FAILURE_WINDOW_SECONDS = 600;
export const BLOCK_SECONDS = 900;
/** Characters of an API key or token that name it for the failure count: enough to tell real keys apart, too few to help a guess. */
const KEY_PREFIX = 8;

/** A counter store: in this process, or on Redis so that replicas share every budget. */
type CounterFactory = (options: { keyPrefix: string; points: number; duration: number; blockDuration?: number }) => RateLimiterAbstract;

const memoryCounters: CounterFactory = (options) => new RateLimiterMemory(options);

/** Counters on Redis; while Redis does not answer, each process counts on its own (the insurance limiter). */
const redisCounters =
  (client: Redis, prefix: string): CounterFactory =>
  (options) =>
    new RateLimiterRedis({
      ...options,
      keyPrefix: `${prefix}:rl:${options.keyPrefix}`,
      storeClient: client,
      insuranceLimiter: new RateLimiterMemory(options),
    });

/** A refusal: how long until the caller may ask again. */
export interface Refusal {
  retryAfterMs: number;
  message: string;
}

/**
 * The request budgets (per partner, and per user of an access token) and the limit on wrong
 * credentials (per client address and per username or key prefix). Budgets count in fixed
 * one-minute windows; a caller over one is refused until its window ends.
 */
export class RequestLimits {
  private readonly requests: RateLimiterAbstract;
  private readonly failuresByAddress: RateLimiterAbstract;
  private readonly failuresByIdentity: RateLimiterAbstract;

  /**
   * When this process last counted wrong credentials. With counters in this process only, no key
   * can be refused once that is longer ago than a window and a refusal: the check is then skipped.
   */
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  private constructor(
    readonly settings: RequestLimitSettings,
    counters: CounterFactory,
    /** Whether only this process counts (no other replica's failures can refuse a key). */
    private readonly countsAlone: boolean,
  ) {
    // Budgets differ by partner: the counter only counts, and `spend` compares with the budget.
    this.requests = counters({ keyPrefix: 'requests', points: Number.MAX_SAFE_INTEGER, duration: WINDOW_SECONDS });
    const failures = { duration: FAILURE_WINDOW_SECONDS };
    this.failuresByAddress = counters({ keyPrefix: 'auth-address', points: settings.failuresPerAddress, ...failures });
    this.failuresByIdentity = counters({ keyPrefix: 'auth-identity', points: settings.failuresPerIdentity, ...failures });
  }

  static inMemory(settings: RequestLimitSettings): RequestLimits {
    return new RequestLimits(settings, memoryCounters, true);
  }

  static onRedis(settings: RequestLimitSettings, client: Redis, prefix: string): RequestLimits {
    return new RequestLimits(settings, redisCounters(client, prefix), false);
  }

  /** Counts a request of an authenticated caller against its budgets; a refusal when one is spent. */
  async spend(request: AuthenticatedRequest, reply: FastifyReply): Promise<Refusal | null> {
    const partner = request.partner!;
    const budget = partner.requestsPerMinute ?? this.settings.partnerPerMinute;
    const token = request.userToken;
    const byPartner = await this.requests.consume(`p:${partner.id}`);
    const byUser = token ? await this.requests.consume(`u:${token.userId}`) : null;
    // Said once a fifth of the budget or less is left: three headers on every answer cost about 5% of
    // the fastest call's throughput (docs/performance.md), and a caller needs them only near the end.
    const remaining = budget - byPartner.consumedPoints;
    if (remaining * 5 <= budget) {
      void reply.header('x-ratelimit-limit', budget);
      void reply.header('x-ratelimit-remaining', Math.max(0, remaining));
      void reply.header('x-ratelimit-reset', Math.ceil(byPartner.msBeforeNext / 1000));
    }
    if (byPartner.consumedPoints > budget)
      return { retryAfterMs: byPartner.msBeforeNext, message: `partner ${partner.id} is over its budget of ${budget} requests a minute` };
    if (byUser && byUser.consumedPoints > this.settings.userTokenPerMinute)
      return {
        retryAfterMs: byUser.msBeforeNext,
        message: `the access tokens of this user are over their budget of ${this.settings.userTokenPerMinute} requests a minute`,
      };
    return null;
  }

  /** The partner's requests counted in the current window, and when it ends; counts nothing. */
  async partnerWindow(partnerId: string): Promise<{ requests: number; resetsInMs: number }> {
    const counted = await this.requests.get(`p:${partnerId}`);
    return { requests: counted?.consumedPoints ?? 0, resetsInMs: counted?.msBeforeNext ?? 0 };
  }

  /** A refusal when the address or the identity presented has failed too often lately. */
  async blocked(address: string, identity: string | null): Promise<Refusal | null> {
    if (this.countsAlone && Date.now() - this.lastFailureAt > (FAILURE_WINDOW_SECONDS + BLOCK_SECONDS) * 1000) return null;
    // Both at once: on Redis each is a round trip.
    const [byAddress, byIdentity] = await Promise.all([
      this.failuresByAddress.get(address),
      identity === null ? null : this.failuresByIdentity.get(identity),
    ]);
    const over = (res: RateLimiterRes | null, points: number) => res !== null && res.consumedPoints >= points;
    if (over(byAddress, this.settings.failuresPerAddress))
      return { retryAfterMs: byAddress!.msBeforeNext, message: 'too many wrong credentials from this address: try again later' };
    if (over(byIdentity, this.settings.failuresPerIdentity))
      return { retryAfterMs: byIdentity!.msBeforeNext, message: 'too many wrong credentials for this account: try again later' };
    return null;
  }

  /** Counts wrong credentials presented from `address` for `identity`. */
  async failed(address: string, identity: string | null): Promise<void> {
    this.lastFailureAt = Date.now();
    await Promise.all([
      countFailure(this.failuresByAddress, address, this.settings.failuresPerAddress),
      identity === null ? null : countFailure(this.failuresByIdentity, identity, this.settings.failuresPerIdentity),
    ]);
  }
}

/** Counts one failure; the one that reaches the limit refuses the key for {@link BLOCK_SECONDS} from now. */
async function countFailure(counter: RateLimiterAbstract, key: string, limit: number): Promise<void> {
  // A consume past the counter's points rejects with its state: a count all the same.
  const counted = await counter.consume(key).catch((refused: unknown) => {
    if (refused instanceof RateLimiterRes) return refused;
    throw refused;
  });
  if (counted.consumedPoints === limit) await counter.block(key, BLOCK_SECONDS);
}

/** What names the account a failed attempt aimed at: the username, or a key's or token's first characters. */
export function attemptedIdentity(kind: 'username' | 'api_key' | 'token', value: string): string {
  return kind === 'username' ? `user:${value}` : `${kind}:${value.slice(0, KEY_PREFIX)}`;
}

/** Answers 429 with `Retry-After` (whole seconds, at least 1) and part 7's body. */
export function refuse(reply: FastifyReply, refusal: Refusal): FastifyReply {
  return reply
    .status(429)
    .header('retry-after', Math.max(1, Math.ceil(refusal.retryAfterMs / 1000)))
    .send(errorBody('rate_limited', refusal.message));
}
