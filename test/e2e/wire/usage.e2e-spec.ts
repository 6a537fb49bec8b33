import { UsageMeter } from '@deals/wire';
import { TestApi } from '../../support/api-harness';
import { tempDir } from '../../support/temp-dir';
import { UNLIMITED } from '../../support/unlimited';

/**
 * Re-reads until `check` passes, or throws its failure after a ceiling that means hung: an answer is
 * counted once sent, which its client may see first.
 */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => void): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    try {
      check(value);
      return value;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

describe("partners' usage figures: answers counted by status, kept across a restart", () => {
  const dir = tempDir('usage');
  afterAll(() => dir.remove());

  it("counts every answer of a partner's requests by status, apart from other partners', and keeps them when the API stops", async () => {
    const first = await TestApi.start({ dataDir: dir.path });
    let partner: Awaited<ReturnType<TestApi['createPartner']>>;
    let expected: Record<string, number>;
    try {
      partner = await first.createPartner('Counted');
      const other = await first.createPartner('Other');
      const basic = { username: partner.username, password: partner.password };
      const statuses = [
        (await first.call('GET', '/api/v1/regions', { apiKey: partner.apiKey })).status,
        (await first.call('GET', '/no/such/call', { apiKey: partner.apiKey })).status,
        (await first.call('GET', '/api/v3/deals', { basic })).status,
        (await first.call('GET', '/deals/no-such-deal', { apiKey: partner.apiKey })).status,
        (await first.call('POST', '/users', { apiKey: partner.apiKey, jsonText: '{"email": ' })).status,
        (await first.call('POST', '/users', { apiKey: partner.apiKey, body: {}, headers: { 'idempotency-key': 'k'.repeat(300) } })).status,
      ];
      expect(statuses).toEqual([200, 404, 200, 404, 422, 400]);
      await first.call('GET', '/api/v1/regions', { apiKey: other.apiKey });
      // Wrong credentials are no partner's request.
      expect((await first.call('GET', '/api/v1/regions', { apiKey: `${partner.apiKey}x` })).status).toBe(401);
      expected = { '200': 2, '400': 1, '404': 2, '422': 1 };

      const meter = first.get(UsageMeter);
      const usage = await eventually(
        () => meter.usageOf({ id: partner.partnerId, requestsPerMinute: null }),
        (u) => expect(u.today.byStatus).toEqual(expected),
      );
      expect(usage.today.day).toBe('2026-06-15');
      expect(usage.days).toHaveLength(7);
      expect(usage.days[6]).toEqual(usage.today);
      expect(usage.days[0]).toEqual({ day: '2026-06-09', byStatus: {} });
      expect(usage.thisMinute).toEqual({ requests: 6, budget: Number(UNLIMITED.RATE_LIMIT_PER_MINUTE), resetsInMs: expect.any(Number) });
      expect((await meter.usageOf({ id: partner.partnerId, requestsPerMinute: 50 })).thisMinute?.budget).toBe(50);
      expect((await meter.usageOf({ id: other.partnerId, requestsPerMinute: null })).today.byStatus).toEqual({ '200': 1 });
      // The key and the v3 password were each used this minute (the clock's: 12:00).
      const minute = Date.parse('2026-06-15T12:00:00Z');
      expect(usage.credentialsLastUsed).toEqual({ [partner.keyId]: minute, password: minute });
    } finally {
      await first.stop();
    }

    // Nothing waited for the flush timer: the counts were stored as the API stopped.
    const second = await TestApi.start({ dataDir: dir.path, clock: first.clock });
    try {
      const meter = second.get(UsageMeter);
      expect((await meter.usageOf({ id: partner.partnerId, requestsPerMinute: null })).today.byStatus).toEqual(expected);
      await second.call('GET', '/deals/no-such-deal', { apiKey: partner.apiKey });
      await eventually(
        () => meter.usageOf({ id: partner.partnerId, requestsPerMinute: null }),
        (u) => expect(u.today.byStatus).toEqual({ ...expected, '404': 3 }),
      );
    } finally {
      await second.stop();
    }
  });
});
