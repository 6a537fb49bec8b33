import { DailyUsage, UsageDelta, UsageStore } from '@deals/kernel';
import { randomUUID } from 'node:crypto';

export interface UsageStoreUnderTest {
  /** A store as one process of the service opens it. */
  store: UsageStore;
  /** Another process's store on the same backend (closed by the suite). */
  openAnother(): Promise<UsageStore>;
  /** Whether several processes write at once (else one after another: the data folder's lock). */
  concurrentProcesses: boolean;
  cleanup(): Promise<void>;
}

const MINUTE = 60_000;
const t0 = Date.parse('2026-06-15T12:00:00Z');
const partner = () => `partner-${randomUUID()}`;
const requests = (partnerId: string, day: string, counts: Record<number, number>): UsageDelta['requests'] =>
  Object.entries(counts).map(([status, count]) => ({ partnerId, day, status: Number(status), count }));
const byDay = (usage: DailyUsage[]) => [...usage].sort((a, b) => a.day.localeCompare(b.day));

/** What every UsageStore adapter promises (ports/usage-store.port.ts). */
export function usageStoreContract(name: string, open: () => Promise<UsageStoreUnderTest>): void {
  describe(`UsageStore contract: ${name}`, () => {
    let subject: UsageStoreUnderTest;
    const others: UsageStore[] = [];
    beforeEach(async () => (subject = await open()));
    afterEach(async () => {
      for (const other of others.splice(0)) await other.close().catch(() => undefined);
      await subject.cleanup();
    });
    const another = async () => {
      const store = await subject.openAnother();
      others.push(store);
      return store;
    };

    it('adds the counts of every flush, by partner, day and status, and gives back the days asked that have some', async () => {
      const [a, b] = [partner(), partner()];
      const { store } = subject;
      await store.add({
        requests: [...requests(a, '2026-06-14', { 200: 5 }), ...requests(a, '2026-06-15', { 200: 3, 404: 1 })],
        lastUsed: [],
      });
      await store.add({
        requests: [...requests(a, '2026-06-15', { 200: 2, 429: 7 }), ...requests(b, '2026-06-15', { 200: 1 })],
        lastUsed: [],
      });
      expect(byDay(await store.dailyUsage(a, ['2026-06-13', '2026-06-14', '2026-06-15']))).toEqual([
        { day: '2026-06-14', byStatus: { '200': 5 } },
        { day: '2026-06-15', byStatus: { '200': 5, '404': 1, '429': 7 } },
      ]);
      expect(await store.dailyUsage(a, ['2026-06-15'])).toEqual([{ day: '2026-06-15', byStatus: { '200': 5, '404': 1, '429': 7 } }]);
      expect(await store.dailyUsage(b, ['2026-06-14', '2026-06-15'])).toEqual([{ day: '2026-06-15', byStatus: { '200': 1 } }]);
      expect(await store.dailyUsage(partner(), ['2026-06-15'])).toEqual([]);
      expect(await store.dailyUsage(a, [])).toEqual([]);
    });

    it('sums the rows of one key given twice in one flush, and takes an empty flush', async () => {
      const a = partner();
      await subject.store.add({ requests: [], lastUsed: [] });
      await subject.store.add({
        requests: [...requests(a, '2026-06-15', { 201: 2 }), ...requests(a, '2026-06-15', { 201: 3 })],
        lastUsed: [
          { partnerId: a, credentialId: 'key-1', minute: t0 },
          { partnerId: a, credentialId: 'key-1', minute: t0 + MINUTE },
        ],
      });
      expect(await subject.store.dailyUsage(a, ['2026-06-15'])).toEqual([{ day: '2026-06-15', byStatus: { '201': 5 } }]);
      expect(await subject.store.lastUsed(a)).toEqual({ 'key-1': t0 + MINUTE });
    });

    it("keeps each credential's latest use, whatever order the flushes arrive in, apart for each partner", async () => {
      const [a, b] = [partner(), partner()];
      const { store } = subject;
      await store.add({
        requests: [],
        lastUsed: [
          { partnerId: a, credentialId: 'key-1', minute: t0 + 5 * MINUTE },
          { partnerId: a, credentialId: 'password', minute: t0 },
          { partnerId: b, credentialId: 'password', minute: t0 + 9 * MINUTE },
        ],
      });
      await store.add({
        requests: [],
        lastUsed: [
          { partnerId: a, credentialId: 'key-1', minute: t0 + 2 * MINUTE },
          { partnerId: a, credentialId: 'password', minute: t0 + 3 * MINUTE },
        ],
      });
      expect(await store.lastUsed(a)).toEqual({ 'key-1': t0 + 5 * MINUTE, password: t0 + 3 * MINUTE });
      expect(await store.lastUsed(b)).toEqual({ password: t0 + 9 * MINUTE });
      expect(await store.lastUsed(partner())).toEqual({});
    });

    it("forgets the days before the one given, and keeps that day's, the later ones' and the credentials' last use", async () => {
      const a = partner();
      const { store } = subject;
      await store.add({
        requests: [
          ...requests(a, '2026-03-16', { 200: 1 }),
          ...requests(a, '2026-03-17', { 200: 2 }),
          ...requests(a, '2026-06-15', { 200: 3 }),
        ],
        lastUsed: [{ partnerId: a, credentialId: 'key-1', minute: Date.parse('2026-03-16T10:00:00Z') }],
      });
      await store.purgeBefore('2026-03-17');
      expect(byDay(await store.dailyUsage(a, ['2026-03-16', '2026-03-17', '2026-06-15']))).toEqual([
        { day: '2026-03-17', byStatus: { '200': 2 } },
        { day: '2026-06-15', byStatus: { '200': 3 } },
      ]);
      expect(await store.lastUsed(a)).toEqual({ 'key-1': Date.parse('2026-03-16T10:00:00Z') });
    });

    it('sums the flushes of every process of the service, and each sees the sums', async () => {
      const a = partner();
      const other = await another();
      const flush = (store: UsageStore, i: number) =>
        store.add({
          requests: requests(a, '2026-06-15', { 200: 1, 500: i % 2 }),
          lastUsed: [{ partnerId: a, credentialId: 'key-1', minute: t0 + i * MINUTE }],
        });
      if (subject.concurrentProcesses) {
        await Promise.all(Array.from({ length: 20 }, (_, i) => flush(i % 2 ? other : subject.store, i)));
      } else {
        for (let i = 0; i < 10; i++) await flush(subject.store, i);
        await subject.store.close();
        for (let i = 10; i < 20; i++) await flush(other, i);
      }
      const expected = [{ day: '2026-06-15', byStatus: { '200': 20, '500': 10 } }];
      expect(await other.dailyUsage(a, ['2026-06-15'])).toEqual(expected);
      expect(await other.lastUsed(a)).toEqual({ 'key-1': t0 + 19 * MINUTE });
      if (subject.concurrentProcesses) expect(await subject.store.dailyUsage(a, ['2026-06-15'])).toEqual(expected);
    });

    it("takes a busy flush at once: a thousand partners' rows", async () => {
      const partners = Array.from({ length: 1000 }, partner);
      await subject.store.add({
        requests: partners.flatMap((p) => requests(p, '2026-06-15', { 200: 10, 404: 1 })),
        lastUsed: partners.map((p) => ({ partnerId: p, credentialId: 'key-1', minute: t0 })),
      });
      expect(await subject.store.dailyUsage(partners[999], ['2026-06-15'])).toEqual([
        { day: '2026-06-15', byStatus: { '200': 10, '404': 1 } },
      ]);
      expect(await subject.store.lastUsed(partners[500])).toEqual({ 'key-1': t0 });
    });
  });
}
