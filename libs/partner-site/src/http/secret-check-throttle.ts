import { addressKey, type CounterFactory } from '@deals/wire';
import type { FastifyReply } from 'fastify';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';

/** Wrong attempts before each next one makes the account, or the address, wait. */
const FREE_BY_ACCOUNT = 3;
/** An office shares an address: more before it waits. */
const FREE_BY_ADDRESS = 10;
/** Attempts are forgotten an hour after the last. */
const WINDOW_SECONDS = 3600;
const MAX_WAIT_SECONDS = 900;

/** A rejected consume carries the counter's state: a count all the same. */
const settled = (refused: unknown): RateLimiterRes => {
  if (refused instanceof RateLimiterRes) return refused;
  throw refused;
};

/**
 * Whose count an attempt adds to besides its address's: a member's account (their id), or, for an
 * attempt from a known device of theirs (a valid device cookie), that device alone.
 */
export type ThrottledAccount = string | { memberId: string; device: string };

/** An attempt refused, before its check or after a failed one: how long the address or account must still wait. */
export class TooSoon {
  constructor(readonly waitMs: number) {}
}

/**
 * Every check of a secret a person types (a sign-in's password and code, the password asked again
 * before a sensitive change, a sign-up link's token), per account (the member id: one budget for
 * every kind of check; a known device of the member's has one of its own, so that strangers' wrong
 * attempts cannot keep the member out of it) and per client address, with a wait that doubles with
 * each attempt past the free ones, up to {@link MAX_WAIT_SECONDS}: guessing gets slow, a typo costs
 * nothing. An attempt is counted when it is admitted, before its secret is checked, and a right one
 * takes its count back; past the free ones, each wait admits one attempt (taken atomically), so
 * attempts sent at once are refused as if sent one after another, and a refused one is never checked
 * (no hash is computed). Counted where the API's request limits count (this process, or Redis for every replica).
 */
export class SecretCheckThrottle {
  private readonly attempts: RateLimiterAbstract;
  private readonly waits: RateLimiterAbstract;

  /** `windowSeconds`: how long after the last attempt its key is forgotten (tests give a short one). */
  constructor(counters: CounterFactory, { windowSeconds = WINDOW_SECONDS }: { windowSeconds?: number } = {}) {
    // Sliding: each attempt counted keeps the key for another window, so a steady guesser never starts afresh.
    this.attempts = counters({ keyPrefix: 'site-secret-checks', points: Number.MAX_SAFE_INTEGER, duration: windowSeconds, sliding: true });
    // One attempt a second once past the free ones, and none while a wait set by `block` runs.
    this.waits = counters({ keyPrefix: 'site-secret-waits', points: 1, duration: 1 });
  }

  /**
   * Runs `check` unless the address or the account (a member id, a known device of a member, or
   * null for a secret that names none) must wait. `accepted` tells a right secret, whose attempt
   * takes the account's (or device's) count back; after a wrong one, a wait that has begun refuses
   * this attempt too.
   */
  async attempt<T>(
    address: string,
    account: ThrottledAccount | null,
    check: () => Promise<T>,
    accepted: (result: T) => boolean,
  ): Promise<T | TooSoon> {
    const keys = keysOf(address, account);
    const wait = await this.admit(keys);
    if (wait > 0) return new TooSoon(wait);
    const result = await check();
    if (accepted(result)) {
      await this.succeeded(keys);
      return result;
    }
    const waitNow = await this.waitAfterFailure(keys);
    return waitNow > 0 ? new TooSoon(waitNow) : result;
  }

  /** Admits an attempt (0), or says how long it must still wait (ms). An address that must wait is refused before its account is counted. */
  private async admit(keys: Keys): Promise<number> {
    for (const [key, free] of [
      [keys.address, FREE_BY_ADDRESS],
      [keys.account, FREE_BY_ACCOUNT],
    ] as const) {
      if (key === null) continue;
      const waiting = await this.waits.get(key);
      if (waiting && waiting.consumedPoints > 1) return waiting.msBeforeNext;
      const counted = await this.attempts.consume(key).catch(settled);
      const past = counted.consumedPoints - free;
      if (past <= 0) continue;
      const ticket = await this.waits.consume(key).catch(settled);
      if (ticket.consumedPoints > 1) return Math.max(1000, ticket.msBeforeNext);
      await this.waits.block(key, Math.min(MAX_WAIT_SECONDS, 2 ** past));
    }
    return 0;
  }

  private async waitAfterFailure(keys: Keys): Promise<number> {
    const found = await Promise.all([keys.address, keys.account].map((key) => (key === null ? null : this.waits.get(key))));
    return Math.max(0, ...found.map((res) => (res && res.consumedPoints > 1 ? res.msBeforeNext : 0)));
  }

  /** A right secret takes back the account's count and wait, and its own attempt from the address's. */
  private async succeeded(keys: Keys): Promise<void> {
    const account = keys.account === null ? [] : [this.attempts.delete(keys.account), this.waits.delete(keys.account)];
    await Promise.all([...account, this.attempts.reward(keys.address)]);
  }
}

interface Keys {
  address: string;
  account: string | null;
}

/**
 * A member id is fixed-size already (24 hex digits), and so is a device id (22 characters, from a
 * cookie the service signed): a counter's key has one size, whatever a client sends.
 */
const keysOf = (address: string, account: ThrottledAccount | null): Keys => ({
  address: `a:${addressKey(address)}`,
  account: account === null ? null : typeof account === 'string' ? `m:${account}` : `d:${account.memberId}.${account.device}`,
});

/** Sets `Retry-After` (whole seconds, at least 1) for a refused attempt; what its page says. */
export function tooSoonText(reply: FastifyReply, refused: TooSoon): string {
  const seconds = Math.max(1, Math.ceil(refused.waitMs / 1000));
  void reply.header('retry-after', seconds);
  return `Too many wrong attempts: wait ${seconds} seconds before trying again.`;
}
