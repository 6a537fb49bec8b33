import { memoryCounters } from '@deals/wire';
import { SecretCheckThrottle, ThrottledAccount, TooSoon } from './secret-check-throttle';

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

describe("SecretCheckThrottle: a member's known device", () => {
  const device = { memberId: ACCOUNT, device: 'd'.repeat(22) };
  const attempt = (throttle: SecretCheckThrottle, address: string, account: ThrottledAccount, right: boolean) =>
    throttle.attempt(
      address,
      account,
      async () => right,
      (ok) => ok,
    );

  it("is admitted while the member's account waits for strangers, and counts against neither", async () => {
    const throttle = new SecretCheckThrottle(memoryCounters);
    for (let i = 0; i < 3; i++) expect(await attempt(throttle, `10.0.1.${i}`, ACCOUNT, false)).toBe(false);
    expect(await attempt(throttle, '10.0.1.9', ACCOUNT, false)).toBeInstanceOf(TooSoon);
    expect(await attempt(throttle, '10.0.2.1', ACCOUNT, true)).toBeInstanceOf(TooSoon);
    expect(await attempt(throttle, '10.0.2.1', device, true)).toBe(true);
    // A right one from the device leaves the account's count to strangers.
    expect(await attempt(throttle, '10.0.2.2', ACCOUNT, true)).toBeInstanceOf(TooSoon);
  });

  it("waits for its own wrong attempts, never making the account wait, and its address counts as anyone's", async () => {
    const throttle = new SecretCheckThrottle(memoryCounters);
    for (let i = 0; i < 3; i++) expect(await attempt(throttle, '10.0.3.1', device, false)).toBe(false);
    expect(await attempt(throttle, '10.0.3.1', device, false)).toBeInstanceOf(TooSoon);
    expect(await attempt(throttle, '10.0.3.2', device, true)).toBeInstanceOf(TooSoon);
    expect(await attempt(throttle, '10.0.3.2', { ...device, device: 'e'.repeat(22) }, true)).toBe(true);
    expect(await attempt(throttle, '10.0.3.3', ACCOUNT, true)).toBe(true);
    // The address's free ones spent, then one admitted past them: the next waits, whatever device it names.
    for (let i = 0; i < 7; i++) await attempt(throttle, '10.0.3.1', { ...device, device: `${i}`.repeat(22) }, false);
    expect(await attempt(throttle, '10.0.3.1', { ...device, device: 'f'.repeat(22) }, true)).toBeInstanceOf(TooSoon);
  });
});

describe('SecretCheckThrottle over time', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-06-15T12:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('forgets attempts an hour after the last, not the first', async () => {
    const throttle = new SecretCheckThrottle(memoryCounters);
    let checked = 0;
    let n = 0;
    // A new address each time: only the account's count matters.
    const wrong = () =>
      throttle.attempt(
        `10.1.0.${++n}`,
        ACCOUNT,
        async () => (checked++, false),
        (ok) => ok,
      );
    expect(await wrong()).toBe(false);
    jest.advanceTimersByTime(59 * 60_000);
    expect(await wrong()).toBe(false);
    expect(await wrong()).toBe(false);
    // Two minutes after the last attempt, an hour and a minute after the first: the count holds.
    jest.advanceTimersByTime(2 * 60_000);
    const outcomes = [await wrong(), await wrong(), await wrong()];
    expect(outcomes[0]).toBeInstanceOf(TooSoon);
    expect((outcomes[0] as TooSoon).waitMs).toBeLessThanOrEqual(2000);
    expect(outcomes.slice(1).every((o) => o instanceof TooSoon)).toBe(true);
    expect(checked).toBe(4);
    // Left alone for an hour after the last attempt, the account starts afresh.
    jest.advanceTimersByTime(60 * 60_000 + 1000);
    expect(await wrong()).toBe(false);
    expect(checked).toBe(5);
  });

  it('admits about as many checks of one account a day as its waits allow, however long it is tried', async () => {
    const throttle = new SecretCheckThrottle(memoryCounters);
    let checked = 0;
    let n = 0;
    const wrong = () =>
      throttle.attempt(
        `10.2.${(++n >> 8) & 255}.${n & 255}`,
        ACCOUNT,
        async () => (checked++, false),
        (ok) => ok,
      );
    // One try a second for a day, from a new address each time.
    for (let second = 0; second < 24 * 3600; second++) {
      await wrong();
      jest.advanceTimersByTime(1000);
    }
    // The free ones, the waits doubling up to the longest, then one each longest wait.
    expect(checked).toBeLessThanOrEqual(3 + 10 + Math.ceil((24 * 3600) / 900));
  }, 60_000);
});
