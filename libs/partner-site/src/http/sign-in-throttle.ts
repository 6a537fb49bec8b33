import type { CounterFactory } from '@deals/wire';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';

/** Wrong sign-ins before each next one makes the account, or the address, wait. */
const FREE_BY_ACCOUNT = 3;
/** An office shares an address: more before it waits. */
const FREE_BY_ADDRESS = 10;
/** Failures are forgotten an hour after the last. */
const WINDOW_SECONDS = 3600;
const MAX_WAIT_SECONDS = 900;

/**
 * Sign-in failures per account (email) and per client address, with a wait that doubles with each
 * failure past the free ones (2 s, 4 s, 8 s ... 15 minutes): guessing gets slow, a typo costs
 * nothing. Counted where the API's request limits count (this process, or Redis for every replica).
 */
export class SignInThrottle {
  private readonly failures: RateLimiterAbstract;
  private readonly waits: RateLimiterAbstract;

  constructor(counters: CounterFactory) {
    this.failures = counters({ keyPrefix: 'site-sign-in-failures', points: Number.MAX_SAFE_INTEGER, duration: WINDOW_SECONDS });
    this.waits = counters({ keyPrefix: 'site-sign-in-waits', points: 1, duration: 1 });
  }

  /** How long the address or the account must still wait, in ms (0: it may try). */
  async waitMs(address: string, email: string): Promise<number> {
    const found = await Promise.all([this.waits.get(`a:${address}`), this.waits.get(`e:${email}`)]);
    return Math.max(0, ...found.map((res) => (res && res.consumedPoints > 1 ? res.msBeforeNext : 0)));
  }

  /** Counts a failure; the wait it starts, in ms (0: none yet). */
  async failed(address: string, email: string): Promise<number> {
    const waits = await Promise.all([this.count(`a:${address}`, FREE_BY_ADDRESS), this.count(`e:${email}`, FREE_BY_ACCOUNT)]);
    return Math.max(...waits) * 1000;
  }

  /** A right password ends the account's count (not the address's). */
  async succeeded(email: string): Promise<void> {
    await this.failures.delete(`e:${email}`);
  }

  private async count(key: string, free: number): Promise<number> {
    const counted = await this.failures.consume(key).catch((refused: unknown) => {
      if (refused instanceof RateLimiterRes) return refused;
      throw refused;
    });
    const past = counted.consumedPoints - free;
    if (past <= 0) return 0;
    const seconds = Math.min(MAX_WAIT_SECONDS, 2 ** past);
    await this.waits.block(key, seconds);
    return seconds;
  }
}
