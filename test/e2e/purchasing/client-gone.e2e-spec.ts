import { SqliteEventStore } from '@deals/adapters';
import { EventStore, loadAggregate, ManualClock, PaymentGateway, ViewStore } from '@deals/kernel';
import { PURCHASE_DETAILS, PurchaseDetails } from '@deals/purchasing';
import { chargeLockStream } from '@deals/purchasing/domain/charge-lock/charge-lock';
import { inventoryDecider, unitsOf } from '@deals/purchasing/domain/inventory/inventory.decider';
import { inventoryStream } from '@deals/purchasing/domain/inventory/inventory.events';
import { purchaseStream } from '@deals/purchasing/domain/purchase/purchase.events';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { TestApi, TestApiOptions } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { holdNextCharge } from '../../support/held-charge';
import { TEST_CARDS } from '../../support/test-cards';
import { tempDir } from '../../support/temp-dir';

/** A purchase's outcome never depends on its client staying for the answer. */
describe('POST /purchases whose client goes away before the answer', () => {
  const insecure = new Agent({ connect: { rejectUnauthorized: false }, connections: 64 });
  afterAll(() => insecure.close());
  const start = (options: TestApiOptions) => TestApi.start(options);

  /** The service under test and how it is reached: over HTTPS, or as behind a TLS proxy (plain HTTP, `X-Forwarded-Proto`). */
  interface Reached {
    api: TestApi;
    origin: string;
    headers: Record<string, string>;
  }
  const reach = (api: TestApi, proxied: boolean): Reached =>
    proxied
      ? { api, origin: `http://127.0.0.1:${api.port}`, headers: { 'x-forwarded-proto': 'https' } }
      : { api, origin: api.url, headers: {} };
  const post = (to: Reached, path: string, body: unknown, signal?: AbortSignal) =>
    request(`${to.origin}${path}`, {
      method: 'POST',
      dispatcher: insecure,
      signal,
      headers: { ...to.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const storeCard = async (to: Reached, apiKey: string, email: string, number: string) => {
    const userId: string = ((await (await post(to, `/users?api_key=${apiKey}`, { email })).body.json()) as { user_id: string }).user_id;
    const card = await post(to, `/credit_cards?api_key=${apiKey}`, {
      user_id: userId,
      number,
      verification_value: '123',
      month: 12,
      year: 2030,
      zip_code: '60601',
    });
    return { userId, cardId: ((await card.body.json()) as { credit_card_id: string }).credit_card_id };
  };
  /** A stored-card purchase of one unit, sent as its own request: `signal` cuts its connection. */
  const purchase = (to: Reached, apiKey: string, dealId: string, buyer: { userId: string; cardId: string }, signal: AbortSignal) =>
    post(
      to,
      `/purchases?api_key=${apiKey}`,
      { deal_id: dealId, quantity: 1, user_id: buyer.userId, credit_card_id: buyer.cardId, expected_price_per_unit: 4900 },
      signal,
    );

  it('sells every unit charged and leaves none held when many clients of a hot deal go away at random points', async () => {
    const api = await start({ clock: new ManualClock(new Date('2026-06-15T12:00:00Z')) });
    try {
      const apiKey = (await api.createPartner()).apiKey;
      await api.importRegions([chicago]);
      await api.importDeals([{ ...spaDay, id: 'hot-deal', quantity: 100_000, max_per_user: undefined }]);
      const to = reach(api, false);
      const buyers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => storeCard(to, apiKey, `buyer-${i}@example.com`, TEST_CARDS.visa)),
      );

      // 600 purchases over 64 connections, half of them cut off at a random point of their first
      // 200 ms (before they are sent, while they wait, while the server works on them).
      let next = 0;
      const answered: Record<string, number> = {};
      const client = async () => {
        for (let n = next++; n < 600; n = next++) {
          const cut = new AbortController();
          const timer = n % 2 ? setTimeout(() => cut.abort(), Math.random() * 200) : null;
          const outcome = await purchase(to, apiKey, 'hot-deal', buyers[n % buyers.length], cut.signal).then(
            async (reply) => (await reply.body.text(), String(reply.statusCode)),
            () => 'cut off',
          );
          if (timer) clearTimeout(timer);
          answered[outcome] = (answered[outcome] ?? 0) + 1;
        }
      };
      await Promise.all(Array.from({ length: 64 }, client));
      expect(await api.requestsDone()).toBe(true);
      await api.settle();

      const { state } = await loadAggregate(api.get(EventStore), inventoryStream('hot-deal'), inventoryDecider);
      expect(state.status).toBe('stocked');
      const inventory = unitsOf(state);
      const deal = (await api.call('GET', '/deals/hot-deal', { apiKey })).body.deal;
      // Stocked = left + sold, to the unit, with the clock still at the start: no hold open, none to lapse.
      expect([inventory.held, inventory.holds.size]).toEqual([0, 0]);
      expect(deal.num_left + deal.number_sold).toBe(100_000);
      expect(deal.number_sold).toBe(inventory.sold);
      const purchases = await api.get(ViewStore).find<PurchaseDetails>(PURCHASE_DETAILS, { 'deal.dealId': 'hot-deal' });
      const fulfilled = purchases.filter((p) => p.fulfillmentState === 'fulfilled');
      expect(fulfilled).toHaveLength(inventory.sold);
      // Every purchase ended: sold, or refused (a buyer's earlier purchase still being charged) with its units given back.
      expect(
        purchases.filter((p) => !['charged/fulfilled', 'failed/released'].includes(`${p.paymentState}/${p.fulfillmentState}`)),
      ).toEqual([]);
      // Every charge the processor approved has its units sold, and every sale its charge.
      const gateway = api.get(PaymentGateway);
      const charged = [];
      for (const p of purchases) if ((await gateway.chargeOutcome(p._id))?.status === 'approved') charged.push(p._id);
      expect(charged.sort()).toEqual(fulfilled.map((p) => p._id).sort());
      // Purchases whose client went away while the server worked on them were carried out all the same.
      expect(fulfilled.length).toBeGreaterThan(answered['200'] ?? 0);
    } finally {
      await api.close();
    }
  }, 300_000);

  it.each([
    ['over HTTPS', false],
    ['behind a TLS proxy', true],
  ])(
    'is finished by a graceful stop %s, as one whose client waits: charged, sold, its lock ended, nothing held',
    async (_, proxied) => {
      const dir = tempDir('client-gone');
      const api = await start({
        clock: new ManualClock(new Date('2026-06-15T12:00:00Z')),
        dataDir: dir.path,
        env: proxied ? { BEHIND_TLS_PROXY: 'on' } : {},
      });
      const to = reach(api, proxied);
      let buyer: { userId: string; cardId: string };
      let purchaseId: string;
      try {
        const apiKey = (await api.createPartner()).apiKey;
        await api.importRegions([chicago]);
        await api.importDeals([{ ...spaDay, quantity: 5 }]);
        buyer = await storeCard(to, apiKey, 'held@example.com', TEST_CARDS.visa);
        const held = holdNextCharge(api);
        const cut = new AbortController();
        const buying = purchase(to, apiKey, spaDay.id, buyer, cut.signal).catch((error: Error) => error.name);
        // In its charge (its answer held until the stop has begun), the client goes away.
        await held.charging;
        const lock = (await api.get(EventStore).readStream(chargeLockStream(buyer.userId))).at(-1)!;
        expect(lock.type).toBe('ChargeBegun');
        purchaseId = (lock.data as { purchaseId: string }).purchaseId;
        cut.abort();
        expect(await buying).toBe('AbortError');
        const clientGone = async () => api.requestsInFlight.clientGone;
        expect(await eventually(clientGone, (count) => count > 0)).toBe(1);
        // The processor answers once the stop is done, or a second into it: a stop that did not wait
        // for the purchase has closed the stores by then, and the purchase cannot be written.
        const stopped = api.stop(30_000);
        void Promise.race([stopped.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000))]).then(held.release);
        await stopped;
      } catch (error) {
        await api.close();
        throw error;
      }
      const written = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      try {
        const { state } = await loadAggregate(written, inventoryStream(spaDay.id), inventoryDecider);
        expect([unitsOf(state).sold, unitsOf(state).held]).toEqual([1, 0]);
        expect((await written.readStream(purchaseStream(purchaseId))).map((e) => e.type)).toEqual(['PurchaseReserved', 'PurchasePaid']);
        expect((await written.readStream(chargeLockStream(buyer.userId))).map((e) => e.type)).toEqual(['ChargeBegun', 'ChargeEnded']);
      } finally {
        await written.close();
        dir.remove();
      }
    },
    120_000,
  );

  it.each([
    ['over HTTPS', false],
    ['behind a TLS proxy', true],
  ])(
    'closes a kept-alive connection with what it answers once stopping %s, so that no new request comes on it',
    async (_, proxied) => {
      const dir = tempDir('stopping-keep-alive');
      const api = await start({
        clock: new ManualClock(new Date('2026-06-15T12:00:00Z')),
        dataDir: dir.path,
        env: proxied ? { BEHIND_TLS_PROXY: 'on' } : {},
      });
      const to = reach(api, proxied);
      // One connection, kept alive between requests, as a proxy keeps its connections to a replica.
      const kept = new Agent({ connect: { rejectUnauthorized: false }, connections: 1, pipelining: 1 });
      try {
        const apiKey = (await api.createPartner()).apiKey;
        await api.importRegions([chicago]);
        await api.importDeals([{ ...spaDay, quantity: 5 }]);
        const buyer = await storeCard(to, apiKey, 'kept@example.com', TEST_CARDS.visa);
        const send = (method: 'GET' | 'POST', path: string, body?: unknown) =>
          request(`${to.origin}${path}`, {
            method,
            dispatcher: kept,
            headers: { ...to.headers, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
        const before = await send('GET', `/api/v1/regions?api_key=${apiKey}`);
        await before.body.text();
        expect(before.headers.connection).not.toBe('close');
        const held = holdNextCharge(api);
        const buying = send('POST', `/purchases?api_key=${apiKey}`, {
          deal_id: spaDay.id,
          quantity: 1,
          user_id: buyer.userId,
          credit_card_id: buyer.cardId,
          expected_price_per_unit: 4900,
        });
        // Its answer held until the stop has begun.
        await held.charging;
        const stopped = api.stop(30_000);
        held.release();
        const answer = await buying;
        await answer.body.text();
        expect([answer.statusCode, answer.headers.connection]).toEqual([200, 'close']);
        await stopped;
      } finally {
        await kept.close();
        await api.close().catch(() => undefined);
        dir.remove();
      }
    },
    120_000,
  );
});
