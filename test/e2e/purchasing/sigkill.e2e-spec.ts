import Database from 'better-sqlite3';
import { SystemClock } from '@deals/kernel';
import { join } from 'node:path';
import { TestApi } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { auditedInventory } from '../../support/inventory-audit';
import { auditedDay, auditedLines } from '../../support/settlement-audit';
import { buyerWithCard } from '../../support/test-cards';
import { tempDir } from '../../support/temp-dir';

const TOTAL = 60;
/** Purchases through before the kill: the load goes on, with units left. */
const KILLED_AT = 20;

/**
 * Kills the API process (SIGKILL) in the middle of a purchase load, starts it again on the same
 * data, and checks: no unit lost or sold twice (the log's inventory adds up and the API agrees),
 * and no charge without coupons (every approved charge at the processor is a fulfilled purchase
 * with one coupon per unit). Refunds run beside the purchases; the statements after the restart are
 * what an auditor computes from the log.
 */
describe('a SIGKILL in the middle of purchases', () => {
  const dir = tempDir('sigkill');
  afterAll(() => dir.remove());

  // A service's start in this process and two API processes' starts, on a machine other suites load too.
  it('loses no unit, sells none twice, and leaves no charge without coupons; the statements match the log', async () => {
    // The partner and the catalogue written by a service in this process, stopped before the API process starts on its data.
    const setup = await TestApi.start({ dataDir: dir.path, clock: new SystemClock() });
    const partner = await setup.createPartner('Load');
    await setup.importRegions([chicago]);
    const start = new Date(Date.now() - 86_400_000).toISOString();
    const end = new Date(Date.now() + 7 * 86_400_000).toISOString();
    await setup.importDeals([{ ...spaDay, quantity: TOTAL, max_per_user: undefined, start_at: start, end_at: end }]);
    await setup.stop();
    const key = `?api_key=${partner.apiKey}`;

    const port = await freePort();
    let api = await ApiProcess.start(dir.path, port);
    const buyers = await Promise.all(Array.from({ length: 12 }, (_, i) => buyerWithCard(api, partner.apiKey, `load${i}@example.com`)));
    let stop = false;
    let bought = 0;
    let refunded = 0;
    const load = buyers.map(async ({ userId, cardId }) => {
      while (!stop) {
        const reply = await api
          .call('POST', `/purchases${key}`, {
            deal_id: 'chicago-spa-day',
            quantity: 1,
            user_id: userId,
            credit_card_id: cardId,
            expected_price_per_unit: 4900,
          })
          .catch(() => undefined);
        if (reply?.status === 200) bought++;
        // Every third purchase refunded at once: refunds are cut by the kill too.
        if (reply?.status === 200 && bought % 3 === 0) {
          const refund = await api
            .call('POST', `/purchases/${reply.body.purchase.id}/refunds${key}`, { reason: 'requested_by_customer' })
            .catch(() => undefined);
          if (refund && refund.status < 300) refunded++;
        }
      }
    });
    const firstDay = new Date().toISOString().slice(0, 10);
    // Killed mid-load, once a third of the units are sold and a refund answered: by the counts, not by the time a machine takes to get there.
    const deadline = Date.now() + 60_000;
    while ((bought < KILLED_AT || refunded < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await api.kill();
    stop = true;
    await Promise.all(load);
    expect(bought).toBeGreaterThanOrEqual(KILLED_AT);

    api = await ApiProcess.start(dir.path, port);
    try {
      // The log: fold the inventory stream as an auditor would.
      const db = new Database(join(dir.path, 'events.sqlite'), { readonly: true });
      const rows = db
        .prepare("SELECT type, data FROM events WHERE stream_id = 'inventory-chicago-spa-day' ORDER BY revision")
        .all() as Array<{ type: string; data: string }>;
      db.close();
      const { total, sold, held } = auditedInventory(rows.map(({ type, data }) => ({ type, data: JSON.parse(data) })));
      expect(sold).toBeGreaterThan(0);
      expect(sold + held).toBeLessThanOrEqual(total);
      // Recovery finished every card purchase the crash interrupted: no hold of one stays open.
      expect(held).toBe(0);
      const deal = (await api.call('GET', `/deals/chicago-spa-day${key}`)).body.deal;
      expect([deal.number_sold, deal.num_left]).toEqual([sold, total - sold]);

      // The processor: every approved charge is a fulfilled purchase with one coupon per unit.
      const vault = new Database(join(dir.path, 'payment-vault.sqlite'), { readonly: true });
      const approved = (
        vault.prepare("SELECT idempotency_key AS id FROM charges WHERE status = 'approved'").all() as Array<{ id: string }>
      ).map((r) => r.id);
      vault.close();
      expect(approved.length).toBe(sold);
      for (const id of approved) {
        const purchase = (await api.call('GET', `/purchases/${id}${key}`)).body.purchase;
        expect([id, purchase.payment_state, purchase.fulfillment_state, purchase.coupons.length]).toEqual([
          id,
          'charged',
          'fulfilled',
          purchase.number_bought,
        ]);
      }

      // The statements of the days the load ran: what the log alone says, to the cent and line by line.
      await api.ready();
      const events = new Database(join(dir.path, 'events.sqlite'), { readonly: true });
      const log = (events.prepare('SELECT position, type, data FROM events ORDER BY position').all() as Array<Record<string, string>>).map(
        (row) => ({ ...row, position: String(row.position).padStart(20, '0'), data: JSON.parse(row.data) }),
      );
      events.close();
      const lines = auditedLines(log as never);
      expect(lines.filter((l) => l.row[2] === 'refund').length).toBeGreaterThan(0);
      const today = new Date().toISOString().slice(0, 10);
      for (const day of [...new Set([firstDay, today])]) {
        const { csv, ...audited } = auditedDay(lines, partner.partnerId, day);
        const statement = (await api.call('GET', `/v1/settlements/${day}${key}`)).body.settlement;
        expect(
          Object.fromEntries(
            Object.keys(audited)
              .filter((k) => k !== 'digest')
              .map((k) => [k, statement[k]]),
          ),
        ).toEqual({
          ...audited,
          digest: undefined,
        } as never);
        expect(await api.text(`/v1/settlements/${day}/line_items.csv${key}`)).toBe(csv);
      }
    } finally {
      await api.stop();
    }
  }, 120_000);
});
