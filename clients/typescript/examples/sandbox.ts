// Building against the sandbox (docs/sandbox.md): with the demo partner's test credentials, make a
// user, store test cards, see a decline and a purchase, read them back from the sandbox's own event
// feed, then make a test clock, reserve under it and advance it past the reservation's five
// minutes. Run beside `npm start`:
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node -r @swc-node/register clients/typescript/examples/sandbox.ts
// (NODE_TLS_REJECT_UNAUTHORIZED trusts the demo's self-signed certificate; never set it against a real installation).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDealsClient } from '../src';

const dataDir = process.env.DATA_DIR ?? 'data';
const demo = JSON.parse(readFileSync(join(dataDir, 'demo-partner.json'), 'utf8')) as { test: { api_key: string } };

/** Where the API serving the data folder answers: DEALS_URL, else the address it recorded there, else port 3000. */
function apiUrl(): string {
  if (process.env.DEALS_URL) return process.env.DEALS_URL;
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'api-address.json'), 'utf8')) as { localUrl: string }).localUrl;
  } catch {
    return 'https://localhost:3000';
  }
}

// The test key: every call acts on the sandbox, never on live users, purchases or units.
const sandbox = createDealsClient({ baseUrl: apiUrl(), apiKey: demo.test.api_key });

/** A call's data, or, when the API refused it, its status and error body printed and the run ended. */
function must<T>(what: string, reply: { data?: T; error?: unknown; response: Response }): T {
  if (reply.data !== undefined) return reply.data;
  console.error(`${what}: ${reply.response.status}`, JSON.stringify(reply.error, null, 2));
  process.exit(1);
}

/** The sandbox's published test cards (docs/api.md, "Purchases and the test cards"). */
const APPROVED = '4242424242424242';
const DECLINED = '4000000000000002';

async function main() {
  const dealId = 'new-york-city-tour-0001';
  const deal = await sandbox.GET('/deals/{deal_id}', { params: { path: { deal_id: dealId } } });
  console.log('livemode', deal.response.headers.get('deals-livemode')); // livemode false
  const price = must('reading the deal', deal).deal.current_price;

  const user = must('making the user', await sandbox.POST('/users', { body: { email: `tester+${Date.now()}@example.com` } }));
  const store = async (number: string) =>
    must(
      'storing a card',
      await sandbox.POST('/credit_cards', {
        body: { user_id: user.user_id, number, verification_value: '123', month: 12, year: 2030, zip_code: '10001' },
      }),
    ).credit_card_id;
  const buy = (credit_card_id: string) =>
    sandbox.POST('/purchases', {
      body: { deal_id: dealId, quantity: 1, user_id: user.user_id, credit_card_id, expected_price_per_unit: price },
    });

  // The declining test card: the refusal a live customer's bank would give.
  const declined = await buy(await store(DECLINED));
  console.log(declined.response.status, declined.error?.error_type); // 422 declined
  const { purchase } = must('buying', await buy(await store(APPROVED)));
  console.log(purchase.payment_state); // charged

  // The sandbox's own feed: its events only, each saying livemode false.
  const feed = must('reading the feed', await sandbox.GET('/v1/events', { params: { query: { resource_id: purchase.id } } }));
  const mine = feed.events.find((e) => e.type === 'purchase.completed');
  console.log(mine?.type, mine?.livemode); // purchase.completed false

  // A test clock: calls sent with its id act in its time, on a world of its own in the sandbox.
  const start = new Date(Math.ceil(Date.now() / 1000) * 1000);
  const clock = must('making a clock', await sandbox.POST('/v1/test_clocks', { body: { frozen_time: start.toISOString() } })).test_clock;
  const underClock = { headers: { 'Deals-Test-Clock': clock.id } };
  const reserved = must(
    'reserving',
    await sandbox.POST('/purchases/reserve', { ...underClock, body: { deal_id: dealId, num_bought: 1 } }),
  ).purchase;
  // Five minutes and one second later, by the clock: the reservation lapses at its own instant.
  must(
    'advancing',
    await sandbox.POST('/v1/test_clocks/{test_clock_id}/advance', {
      params: { path: { test_clock_id: clock.id } },
      body: { frozen_time: new Date(start.getTime() + 301_000).toISOString() },
    }),
  );
  for (let ready = false; !ready; await new Promise((r) => setTimeout(r, 100)))
    ready =
      must('reading the clock', await sandbox.GET('/v1/test_clocks/{test_clock_id}', { params: { path: { test_clock_id: clock.id } } }))
        .test_clock.status === 'ready';
  const lapsed = must(
    'reading its feed',
    await sandbox.GET('/v1/events', { ...underClock, params: { query: { resource_id: reserved.id } } }),
  );
  const expiry = lapsed.events.find((e) => e.type === 'reservation.expired');
  console.log(expiry?.type, expiry && (Date.parse(expiry.created_at) - start.getTime()) / 1000); // reservation.expired 300
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
