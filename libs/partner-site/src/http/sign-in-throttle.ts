import { addressKey, type CounterFactory } from '@deals/wire';
import { createHash } from 'node:crypto';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';

/** Wrong sign-ins before each next one makes the account, or the address, wait. */
const FREE_BY_ACCOUNT = 3;
/** An office shares an address: more before it waits. */
const FREE_BY_ADDRESS = 10;
/** Failures are forgotten an hour after the last. */
const WINDOW_SECONDS = 3600;
const MAX_WAIT_SECONDS = 900;

/** A rejected consume carries the counter's state: a count all the same. */
const settled = (refused: unknown): RateLimiterRes => {
  if (refused instanceof RateLimiterRes) return refused;
  throw refused;
};

/**
 * Sign-in attempts per account (email) and per client address, with a wait that doubles with each
 * attempt past the free ones (2 s, 4 s, 8 s ... 15 minutes): guessing gets slow, a typo costs
 * nothing. An attempt is counted when it is admitted, before its password is checked, and a right
 * one takes its count back; past the free ones, each wait admits one attempt (taken atomically), so
 * attempts sent at once are refused as if sent one after another. Counted where the API's request
 * limits count (this process, or Redis for every replica); an account is named by a fixed-size hash.
 */
export class SignInThrottle {
  private readonly attempts: RateLimiterAbstract;
  private readonly waits: RateLimiterAbstract;

  constructor(counters: CounterFactory) {
    this.attempts = counters({ keyPrefix: 'site-sign-in-failures', points: Number.MAX_SAFE_INTEGER, duration: WINDOW_SECONDS });
    // One attempt a second once past the free ones, and none while a wait set by `block` runs.
    this.waits = counters({ keyPrefix: 'site-sign-in-waits', points: 1, duration: 1 });
  }

  /**
   * Admits an attempt (0), or says how long the address or account must still wait (ms). An
   * address that must wait is refused before its account is counted.
   */
  async admit(address: string, email: string): Promise<number> {
    for (const [key, free] of [
      [`a:${addressKey(address)}`, FREE_BY_ADDRESS],
      [`e:${accountKey(email)}`, FREE_BY_ACCOUNT],
    ] as const) {
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

  /** How long the next attempt of the address or account must wait after a failure, in ms (0: none). */
  async waitAfterFailure(address: string, email: string): Promise<number> {
    const found = await Promise.all([this.waits.get(`a:${addressKey(address)}`), this.waits.get(`e:${accountKey(email)}`)]);
    return Math.max(0, ...found.map((res) => (res && res.consumedPoints > 1 ? res.msBeforeNext : 0)));
  }

  /** A right password takes back the account's count and wait, and its own attempt from the address's. */
  async succeeded(address: string, email: string): Promise<void> {
    const account = `e:${accountKey(email)}`;
    await Promise.all([this.attempts.delete(account), this.waits.delete(account), this.attempts.reward(`a:${addressKey(address)}`)]);
  }
}

const accountKey = (email: string) => createHash('sha256').update(email).digest('base64url').slice(0, 22);
