import { runCli } from '../../support/api-harness';
import type { ApiProcess } from '../../support/api-process';
import { chicago, honolulu, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { ferretdbUnavailable } from '../../support/ferretdb';
import { processesPostgresUnavailableSync } from '../../support/private-postgres';
import { hasRedisServer } from '../../support/redis-server';
import { ReplicatedService, startReplicatedService } from '../../support/replicated-service';
import { tempDir } from '../../support/temp-dir';
import { buyerWithCard, TEST_CARDS } from '../../support/test-cards';

const why = processesPostgresUnavailableSync() ?? (hasRedisServer() ? null : 'no redis-server binary on PATH') ?? ferretdbUnavailable();
const DAY_MS = 86_400_000;
/** Between two reads of a state awaited from the service: they cost what they wait on. */
const ASK_EVERY_MS = 50;

/** Where a deal is: the Loop (the region's centre), Evanston (~12 miles north), Honolulu. */
const PLACES = {
  loop: { latitude: 41.886, longitude: -87.627 },
  evanston: { latitude: 42.0451, longitude: -87.6877 },
  honolulu: { latitude: 21.3069, longitude: -157.8583 },
};
type Place = keyof typeof PLACES;

/** A partner's own data as the API takes it: keys FerretDB cannot hold as they are, arrays in arrays. */
const ODD_DATA = { 'tier.level': 'gold', $source: { 'utm.campaign': [[1, 2], [], [['x']]] }, '%a': ['%2E'], scores: [[0.5, -1]] };

/**
 * The catalogue: a deal for each test that buys, and deals of several prices, places and starts
 * for the lists (each starting a minute after the last, so that every order is one).
 */
function catalogue(now: number) {
  const end = new Date(now + 7 * DAY_MS).toISOString();
  let minutes = 0;
  const deal = (id: string, place: Place, fields: Record<string, unknown> = {}) => {
    const { latitude, longitude } = PLACES[place];
    return {
      ...spaDay,
      id,
      region_id: place === 'honolulu' ? 'honolulu' : 'chicago',
      quantity: 100,
      max_per_user: undefined,
      start_at: new Date(now - DAY_MS + 60_000 * minutes++).toISOString(),
      end_at: end,
      locations: [{ ...spaDay.locations![0], address: { ...spaDay.locations![0].address, latitude, longitude } }],
      ...fields,
    };
  };
  return [
    deal('raced-spa', 'loop', { quantity: 20 }),
    deal('decided-spa', 'loop', { quantity: 30, current_price: 4900 }),
    deal('released-spa', 'loop', { quantity: 5 }),
    deal('odd-data-spa', 'loop', { custom_data: ODD_DATA }),
    deal('list-cheap', 'loop', { current_price: 1000 }),
    deal('list-mid', 'evanston', { current_price: 2500, category: 'Activities' }),
    deal('list-dear', 'loop', { current_price: 8000 }),
    deal('list-island', 'honolulu', { current_price: 1500 }),
  ];
}

if (why) {
  describe.skip(`two API replicas and a worker, the views on FerretDB — skipped: ${why}`, () => {
    it('needs PostgreSQL, Redis and FerretDB', () => undefined);
  });
} else {
  /**
   * The distributed mode with the views on MongoDB's wire protocol: two API processes and a worker,
   * the log on a PostgreSQL database of the suite's own (`DATABASE_URL`), the views on a FerretDB of
   * its own over SQLite (`MONGO_URL`), Redis for the jobs. What the PostgreSQL suite proves of
   * purchases, lists, rebuilds and reading one's writes, through the MongoDB view store.
   */
  describe('two API replicas and a worker, the views on FerretDB', () => {
    const dir = tempDir('ferretdb-views');
    const deals = catalogue(Date.now());
    let service: ReplicatedService;
    let replicas: ApiProcess[];
    let env: Record<string, string>;
    let apiKey: string;
    let key: string;
    let basic: string;
    const deal = async (api: ApiProcess, id: string) => (await api.call('GET', `/deals/${id}?${key}`)).body.deal;
    /** The deal's units left as `api` shows them, once they are `expected` (the worker's fold), or as they are after a ceiling meaning "hung". */
    const unitsLeft = (api: ApiProcess, id: string, expected: number) =>
      eventually(
        () => deal(api, id).then((d) => d.num_left as number),
        (n) => n === expected,
        30_000,
        ASK_EVERY_MS,
      );
    const v3 = (api: ApiProcess, query: Record<string, string>) =>
      api.callWithHeaders('GET', `/api/v3/deals?${new URLSearchParams(query)}`, undefined, { authorization: `Basic ${basic}` });

    beforeAll(async () => {
      service = await startReplicatedService({
        label: 'ferretdb_views',
        dir: dir.path,
        views: 'ferretdb',
        regions: [chicago, { ...honolulu, active: true }],
        deals,
        partners: [['--name', 'Ferreted']],
      });
      ({ replicas, env } = service);
      const [partner] = service.partners;
      apiKey = partner.api_key;
      key = `api_key=${apiKey}`;
      basic = Buffer.from(`${partner.username}:${partner.password}`).toString('base64');
    }, 300_000);

    afterAll(async () => {
      await service?.stop();
      dir.remove();
    }, 60_000);

    it('sells exactly the units of a deal that 60 buyers reserve at once through both replicas, with no 5xx; both show it sold out at once', async () => {
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          replicas[i % 2].call('POST', `/purchases/reserve?${key}`, { deal_id: 'raced-spa', num_bought: 1 }),
        ),
      );
      const statuses = replies.map((r) => r.status);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 422).length]).toEqual([20, 40]);
      for (const api of replicas) expect((await deal(api, 'raced-spa')).num_left).toBe(0);
      const id = replies.find((r) => r.status === 200)!.body.purchase.id;
      for (const api of replicas)
        expect((await api.call('GET', `/purchases/${id}?${key}`)).body.purchase.fulfillment_state).toBe('reserved');
    });

    it("answers a card purchase on one replica; the other shows it at once, the same, and lists it under its user; the deal's units follow", async () => {
      const { userId, cardId } = await buyerWithCard(replicas[0], apiKey, 'decided@ferretdb.test');
      const anyOrigin = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/https:\/\/localhost:\d+/g, 'https://replica'));
      for (let round = 0; round < 3; round++) {
        const [buyer, other] = [replicas[round % 2], replicas[(round + 1) % 2]];
        const order = { deal_id: 'decided-spa', quantity: 2, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 };
        const { status, body } = await buyer.call('POST', `/purchases?${key}`, order);
        expect(status).toBe(200);
        expect(body.purchase.coupons).toHaveLength(2);
        const [shown, listed] = await Promise.all([
          other.call('GET', `/purchases/${body.purchase.id}?${key}`),
          other.call('GET', `/users/${userId}/purchases?${key}&per_page=50`),
        ]);
        expect(anyOrigin(shown.body)).toEqual(anyOrigin(body));
        expect(anyOrigin(listed.body.purchases)).toContainEqual(anyOrigin(body.purchase));
        expect((await deal(buyer, 'decided-spa')).num_left).toBe(30 - 2 * (round + 1));
        expect(await unitsLeft(other, 'decided-spa', 30 - 2 * (round + 1))).toBe(30 - 2 * (round + 1));
      }
      // The user's purchases page by page, newest first, through either replica: the three, once each.
      const pages = await Promise.all(
        [1, 2, 3, 4].map(
          async (page) => (await replicas[page % 2].call('GET', `/users/${userId}/purchases?${key}&per_page=1&page=${page}`)).body,
        ),
      );
      expect(pages.map((p) => p.purchases.length)).toEqual([1, 1, 1, 0]);
      expect(new Set(pages.flatMap((p) => p.purchases.map((purchase: { id: string }) => purchase.id))).size).toBe(3);
      expect((await replicas[1].call('GET', `/users/${userId}/purchases?${key}&count=true`)).body.count).toBe(3);
    });

    it('reads a write on one replica at once on the other: a user made and changed, a card stored, a reservation released', async () => {
      const [a, b] = replicas;
      const made = await a.call('POST', `/users?${key}`, { email: 'written@ferretdb.test', first_name: 'Ann' });
      expect(made.status).toBe(200);
      const userId = made.body.user_id;
      expect((await b.call('GET', `/users/${userId}?${key}`)).body.user.firstname).toBe('Ann');
      expect((await b.call('PUT', `/users/${userId}?${key}`, { first_name: 'Bea', last_name: null })).status).toBe(200);
      expect((await a.call('GET', `/users/${userId}?${key}`)).body.user).toMatchObject({ firstname: 'Bea', lastname: '' });
      const card = { user_id: userId, number: TEST_CARDS.mastercard, verification_value: '123', month: 12, year: 2031, zip_code: '60601' };
      const stored = await b.call('POST', `/credit_cards?${key}`, card);
      expect(stored.status).toBe(200);
      const listed = (await a.call('GET', `/credit_cards?user_id=${userId}&${key}`)).body.credit_cards;
      expect(listed.map((c: { id: string }) => c.id)).toEqual([stored.body.credit_card_id]);
      for (let round = 0; round < 3; round++) {
        const [holder, releaser] = [replicas[round % 2], replicas[(round + 1) % 2]];
        const reserved = await holder.call('POST', `/purchases/reserve?${key}`, { deal_id: 'released-spa', num_bought: 2 });
        expect(reserved.status).toBe(200);
        const released = await releaser.call('PUT', `/purchases/${reserved.body.purchase.id}/release?${key}`, {});
        expect([released.status, released.body.purchase.fulfillment_state]).toEqual([200, 'released']);
        const read = await holder.call('GET', `/purchases/${reserved.body.purchase.id}?${key}`);
        expect(read.body.purchase.fulfillment_state).toBe('released');
        // The deal's units are the worker's to fold back; either replica shows them once folded.
        for (const api of replicas) expect(await unitsLeft(api, 'released-spa', 5)).toBe(5);
      }
    });

    it("keeps a partner's own data as written (keys with '.' or '$', arrays in arrays): a deal's custom_data, a user's partner_data; nothing set aside", async () => {
      for (const api of replicas) expect((await deal(api, 'odd-data-spa')).custom_data).toEqual(ODD_DATA);
      const made = await replicas[0].call('POST', `/users?${key}`, { email: 'odd-data@ferretdb.test', partner_data: ODD_DATA });
      expect(made.status).toBe(200);
      expect((await replicas[1].call('GET', `/users/${made.body.user_id}?${key}`)).status).toBe(200);
      const changed = await replicas[1].call('PUT', `/users/${made.body.user_id}?${key}`, {
        first_name: 'Odd',
        partner_data: { ...ODD_DATA, 'tier.level': 'platinum' },
      });
      expect(changed.status).toBe(200);
      expect((await replicas[0].call('GET', `/users/${made.body.user_id}?${key}`)).body.user.firstname).toBe('Odd');
      await Promise.all(replicas.map((api) => api.ready()));
      const letters = await runCli(dir.path, ['projections:dead-letters', '--json'], env);
      expect([letters.code, JSON.parse(letters.stdout)]).toEqual([0, []]);
    });

    it('lists as the catalogue says, the same through both replicas: v3 filtered, sorted and paged, deals around a point, a region', async () => {
      const ids = (list: Array<{ id: string }>) => list.map((d) => d.id);
      const byStart = (place: (p: Place) => boolean) =>
        deals.filter((d) => place((Object.keys(PLACES) as Place[]).find((p) => PLACES[p].latitude === d.locations[0].address.latitude)!));
      const expectations: Array<[(api: ApiProcess) => Promise<string[]>, string[]]> = [
        [
          async (api) => ids((await v3(api, { fields: 'id', filter: 'price<2000', sort: 'price(asc)' })).body.deals),
          ['list-cheap', 'list-island'],
        ],
        [async (api) => ids((await v3(api, { fields: 'id', filter: 'category[Activities]' })).body.deals), ['list-mid']],
        [async (api) => ids((await v3(api, { fields: 'id', filter: 'region[honolulu]' })).body.deals), ['list-island']],
        // $geoWithin, answered in the process (FerretDB has neither the operator nor 2dsphere indexes).
        [
          async (api) => ids((await v3(api, { fields: 'id', filter: 'lat_long[41.8781,-87.6298,5]', sort: 'start_at(asc)' })).body.deals),
          ids(byStart((p) => p === 'loop')),
        ],
        [
          async (api) => ids((await api.call('GET', `/deals/locate?latitude=41.8781&longitude=-87.6298&radius=20&${key}`)).body.deals),
          ids(byStart((p) => p !== 'honolulu')),
        ],
        [async (api) => ids((await api.call('GET', `/regions/honolulu/deals?${key}`)).body.deals), ['list-island']],
      ];
      for (const api of replicas) for (const [list, expected] of expectations) expect(await list(api)).toEqual(expected);
      // v3 page by page, following next_page, alternating replicas: every deal on sale once, latest end first then by start.
      const collected: string[] = [];
      let page = await v3(replicas[0], { fields: 'id', sort: 'start_at(desc)', per_page: '3' });
      for (let i = 1; ; i++) {
        collected.push(...ids(page.body.deals));
        if (!page.body.next_page) break;
        const next = new URL(page.body.next_page);
        page = await replicas[i % 2].callWithHeaders('GET', next.pathname + next.search, undefined, { authorization: `Basic ${basic}` });
      }
      expect(collected).toEqual(ids([...deals].reverse()));
    });

    it('rebuilds a view into FerretDB while the replicas serve, then every view in two processes while they sell: the same answers after, on the new generations', async () => {
      const before = await Promise.all(['decided-spa', 'odd-data-spa'].map((id) => deal(replicas[0], id)));
      const listBefore = (await v3(replicas[1], { fields: 'id,price', sort: 'price(asc)' })).body;
      let serving = true;
      const reads: number[] = [];
      const reading = (async () => {
        while (serving) reads.push((await replicas[1].call('GET', `/deals/decided-spa?${key}`)).status);
      })();
      const one = await runCli(dir.path, ['projections:rebuild', 'deal_details_v3'], env);
      serving = false;
      await reading;
      expect([one.code, one.stderr.includes('Error')]).toEqual([0, false]);
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((s) => s === 200)).toBe(true);
      for (const api of replicas) expect(await Promise.all(['decided-spa', 'odd-data-spa'].map((id) => deal(api, id)))).toEqual(before);

      serving = true;
      const sold: number[] = [];
      const selling = (async () => {
        while (serving) {
          reads.push((await replicas[1].call('GET', `/deals/released-spa?${key}`)).status);
          if (sold.length < 3)
            sold.push((await replicas[0].call('POST', `/purchases/reserve?${key}`, { deal_id: 'released-spa', num_bought: 1 })).status);
        }
      })();
      const all = await runCli(dir.path, ['projections:rebuild', '--workers=2'], env);
      serving = false;
      await selling;
      expect([all.code, all.stdout]).toEqual([0, expect.stringMatching(/2 processes[\s\S]*and switched to them\.\n$/)]);
      expect(reads.every((s) => s === 200)).toBe(true);
      expect(sold.every((s) => s === 200)).toBe(true);
      // Each replica and the worker on the new generations: what was sold meanwhile shows, and so does a sale after.
      for (const api of replicas) expect(await unitsLeft(api, 'released-spa', 5 - sold.length)).toBe(5 - sold.length);
      expect((await replicas[1].call('POST', `/purchases/reserve?${key}`, { deal_id: 'released-spa', num_bought: 1 })).status).toBe(200);
      for (const api of replicas) {
        expect((await deal(api, 'released-spa')).num_left).toBe(4 - sold.length);
        expect(await Promise.all(['decided-spa', 'odd-data-spa'].map((id) => deal(api, id)))).toEqual(before);
        expect((await v3(api, { fields: 'id,price', sort: 'price(asc)' })).body).toEqual(listBefore);
      }
    });
  });
}
