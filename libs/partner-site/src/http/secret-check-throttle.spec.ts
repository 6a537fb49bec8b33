import { memoryCounters } from '@deals/wire';
import { SecretCheckThrottle, TooSoon } from './secret-check-throttle';

const ACCOUNT = '0123456789abcdef01234567';

describe('SecretCheckThrottle', () => {
  let throttle: SecretCheckThrottle;
  let checked: number;
  const wrong = (address: string, account: string | null = ACCOUNT) =>
    throttle.attempt(
      address,
      account,
      async () => {
        checked++;
        return false;
      },
      (right) => right,
    );
  const right = (address: string, account: string | null = ACCOUNT) =>
    throttle.attempt(
      address,
      account,
      async () => {
        checked++;
        return true;
      },
      (ok) => ok,
    );

  beforeEach(() => {
    throttle = new SecretCheckThrottle(memoryCounters);
    checked = 0;
  });

  it('refuses checks sent at once as if one after another: three free, then one a wait, the rest never checked', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => wrong(`10.0.0.${i + 1}`)));
    expect(checked).toBe(4);
    // The checked ones are answered as wrong, or refused once the wait they began runs.
    const refused = outcomes.filter((o): o is TooSoon => o instanceof TooSoon);
    expect(refused.length).toBeGreaterThanOrEqual(17);
    expect(Math.max(...refused.map((r) => r.waitMs))).toBeLessThanOrEqual(2000);
    expect(await right('10.0.0.99')).toBeInstanceOf(TooSoon);
    expect(checked).toBe(4);
  });

  it('counts every kind of check of an account in one budget, from any address', async () => {
    expect(await wrong('10.0.0.1')).toBe(false);
    expect(await wrong('10.0.0.2')).toBe(false);
    expect(await wrong('10.0.0.3')).toBe(false);
    expect(await wrong('10.0.0.4')).toBeInstanceOf(TooSoon);
  });

  it('takes the account back with a right secret, and counts a secret naming no account by its address only', async () => {
    await wrong('10.0.0.1');
    await wrong('10.0.0.1');
    expect(await right('10.0.0.1')).toBe(true);
    for (let i = 0; i < 3; i++) expect(await wrong('10.0.0.1')).toBe(false);
    for (let i = 0; i < 7; i++) expect(await wrong('10.0.0.5', null)).toBe(false);
    for (let i = 0; i < 3; i++) expect(await wrong('10.0.0.5', null)).toBe(false);
    expect(await wrong('10.0.0.5', null)).toBeInstanceOf(TooSoon);
    expect(await right('10.0.0.5', `${ACCOUNT.slice(0, 23)}8`)).toBeInstanceOf(TooSoon);
  });
});
