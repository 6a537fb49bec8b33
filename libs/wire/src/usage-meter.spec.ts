import { DailyUsage, ManualClock, UsageDelta, UsageStore } from '@deals/kernel';
import type { FastifyReply } from 'fastify';
import type { AuthenticatedRequest } from './authenticated-request';
import { RequestLimits } from './request-limits';
import { UsageMeter } from './usage-meter';

/** The port's sums in memory, with every flush it was given; `failNext` makes the next add throw. */
class MemoryUsageStore extends UsageStore {
  readonly flushes: UsageDelta[] = [];
  readonly counts = new Map<string, number>();
  readonly used = new Map<string, number>();
  purgedBefore: string | null = null;
  failNext = false;
  /** Holds adds until it resolves (to see a read while a flush is in flight). */
  gate: Promise<void> = Promise.resolve();

  async add(delta: UsageDelta): Promise<void> {
    await this.gate;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('the store is away');
    }
    this.flushes.push(delta);
    for (const { partnerId, day, status, count } of delta.requests) {
      const key = `${partnerId}|${day}|${status}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + count);
    }
    for (const { partnerId, credentialId, minute } of delta.lastUsed) {
      const key = `${partnerId}|${credentialId}`;
      this.used.set(key, Math.max(this.used.get(key) ?? 0, minute));
    }
  }
  async dailyUsage(partnerId: string, days: readonly string[]): Promise<DailyUsage[]> {
    return days.flatMap((day) => {
      const byStatus: Record<string, number> = {};
      for (const [key, count] of this.counts) {
        const [p, d, status] = key.split('|');
        if (p === partnerId && d === day) byStatus[status] = count;
      }
      return Object.keys(byStatus).length ? [{ day, byStatus }] : [];
    });
  }
  async lastUsed(partnerId: string): Promise<Record<string, number>> {
    return Object.fromEntries(
      [...this.used].filter(([key]) => key.startsWith(`${partnerId}|`)).map(([key, at]) => [key.split('|')[1], at]),
    );
  }
  async purgeBefore(day: string): Promise<void> {
    this.purgedBefore = day;
  }
  async close(): Promise<void> {}
}

const t0 = '2026-06-15T12:00:30Z';
const MINUTE = 60_000;
const partner = { id: 'p1', requestsPerMinute: null };

describe('UsageMeter', () => {
  let clock: ManualClock;
  let store: MemoryUsageStore;
  let meter: UsageMeter;
  beforeEach(() => {
    clock = new ManualClock(new Date(t0));
    store = new MemoryUsageStore();
    meter = new UsageMeter(store, clock);
  });
  afterEach(() => meter.stop());

  it("counts answers by partner, day and status; today is the stored counts plus this process's unflushed ones", async () => {
    for (const status of [200, 200, 404, 400]) meter.count('p1', 'key-1', status);
    meter.count('p2', 'key-2', 200);
    await meter.flush();
    meter.count('p1', 'key-1', 200);
    const usage = await meter.usageOf(partner);
    expect(usage.today).toEqual({ day: '2026-06-15', byStatus: { '200': 3, '400': 1, '404': 1 } });
    expect(usage.days.map((d) => d.day)).toEqual([
      '2026-06-09',
      '2026-06-10',
      '2026-06-11',
      '2026-06-12',
      '2026-06-13',
      '2026-06-14',
      '2026-06-15',
    ]);
    expect(usage.days.slice(0, 6).every((d) => Object.keys(d.byStatus).length === 0)).toBe(true);
    expect(usage.credentialsLastUsed).toEqual({ 'key-1': Date.parse('2026-06-15T12:00:00Z') });
    expect(usage.thisMinute).toBeNull();
    await meter.flush();
    expect(await store.dailyUsage('p1', ['2026-06-15'])).toEqual([{ day: '2026-06-15', byStatus: { '200': 3, '400': 1, '404': 1 } }]);
    expect(await store.dailyUsage('p2', ['2026-06-15'])).toEqual([{ day: '2026-06-15', byStatus: { '200': 1 } }]);
  });

  it("records a credential's use once a minute: a flush carries one row per credential and minute at most", async () => {
    for (let i = 0; i < 50; i++) meter.count('p1', 'key-1', 200);
    meter.count('p1', 'password', 200);
    meter.count('p1', undefined, 200); // a user's access token: no credential of the partner's
    clock.advance(MINUTE);
    meter.count('p1', 'key-1', 200);
    await meter.flush();
    for (let i = 0; i < 50; i++) meter.count('p1', 'key-1', 200);
    await meter.flush();
    const minute = Date.parse('2026-06-15T12:00:00Z');
    expect(store.flushes.map((f) => f.lastUsed)).toEqual([
      [
        { partnerId: 'p1', credentialId: 'key-1', minute },
        { partnerId: 'p1', credentialId: 'password', minute },
        { partnerId: 'p1', credentialId: 'key-1', minute: minute + MINUTE },
      ],
      [],
    ]);
    expect(await store.lastUsed('p1')).toEqual({ 'key-1': minute + MINUTE, password: minute });
  });

  it('counts the answers before and after midnight in their own days', async () => {
    clock.set('2026-06-15T23:59:59.500Z');
    meter.count('p1', 'key-1', 200);
    clock.advance(1000);
    meter.count('p1', 'key-1', 201);
    const usage = await meter.usageOf(partner);
    expect(usage.days.slice(-2)).toEqual([
      { day: '2026-06-15', byStatus: { '200': 1 } },
      { day: '2026-06-16', byStatus: { '201': 1 } },
    ]);
    await meter.flush();
    expect(store.flushes[0].requests).toEqual([
      { partnerId: 'p1', day: '2026-06-15', status: 200, count: 1 },
      { partnerId: 'p1', day: '2026-06-16', status: 201, count: 1 },
    ]);
  });

  it('keeps the counts of a flush that failed for the next one', async () => {
    meter.count('p1', 'key-1', 200);
    store.failNext = true;
    await expect(meter.flush()).rejects.toThrow('the store is away');
    meter.count('p1', 'key-1', 200);
    expect((await meter.usageOf(partner)).today.byStatus).toEqual({ '200': 2 });
    await meter.flush();
    expect(await store.dailyUsage('p1', ['2026-06-15'])).toEqual([{ day: '2026-06-15', byStatus: { '200': 2 } }]);
    expect(await store.lastUsed('p1')).toEqual({ 'key-1': Date.parse('2026-06-15T12:00:00Z') });
  });

  it('counts an answer once while a flush is in flight: neither lost nor counted twice', async () => {
    for (let i = 0; i < 3; i++) meter.count('p1', 'key-1', 200);
    let open!: () => void;
    store.gate = new Promise((resolve) => (open = resolve));
    const flushing = meter.flush();
    meter.count('p1', 'key-1', 200);
    const reading = meter.usageOf(partner);
    open();
    await flushing;
    expect((await reading).today.byStatus).toEqual({ '200': 4 });
  });

  it("reads this minute against the partner's budget from the request budgets, counting nothing", async () => {
    const limits = RequestLimits.inMemory({ partnerPerMinute: 100, userTokenPerMinute: 10, failuresPerAddress: 5, failuresPerIdentity: 5 });
    meter.readBudgetsFrom(limits);
    const request = { partner: { id: 'p1', name: 'P', role: 'partner', requestsPerMinute: null } } as AuthenticatedRequest;
    const reply = { header: () => reply } as unknown as FastifyReply;
    for (let i = 0; i < 7; i++) await limits.spend(request, reply);
    const { thisMinute } = await meter.usageOf(partner);
    expect(thisMinute).toMatchObject({ requests: 7, budget: 100 });
    expect(thisMinute!.resetsInMs).toBeGreaterThan(0);
    expect((await meter.usageOf({ id: 'p1', requestsPerMinute: 20 })).thisMinute).toMatchObject({ requests: 7, budget: 20 });
    expect((await meter.usageOf({ id: 'p2', requestsPerMinute: null })).thisMinute).toEqual({ requests: 0, budget: 100, resetsInMs: 0 });
  });

  it('stores what it counted when stopped, and purges the days older than it keeps', async () => {
    meter.count('p1', 'key-1', 500);
    await meter.stop();
    expect(await store.dailyUsage('p1', ['2026-06-15'])).toEqual([{ day: '2026-06-15', byStatus: { '500': 1 } }]);
    await meter.purgeOld();
    expect(store.purgedBefore).toBe('2026-03-17');
  });
});
