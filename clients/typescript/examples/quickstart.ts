// The README's quick start: the demo partner lists deals, makes a user, stores a card, buys and
// redeems the coupon, with the generated client. Run beside `npm start`:
//   CARD_NUMBER=<a card the simulated processor approves: docs/api.md> NODE_TLS_REJECT_UNAUTHORIZED=0 \
//     node -r @swc-node/register clients/typescript/examples/quickstart.ts
// (NODE_TLS_REJECT_UNAUTHORIZED trusts the demo's self-signed certificate; never set it against a real installation).
// A refusal prints the API's error body and ends the run with status 1.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDealsClient } from '../src';

const dataDir = process.env.DATA_DIR ?? 'data';
const demo = JSON.parse(readFileSync(join(dataDir, 'demo-partner.json'), 'utf8')) as {
  api_key: string;
  username: string;
  password: string;
};

/** Where the API serving the data folder answers: DEALS_URL, else the address it recorded there, else port 3000. */
function apiUrl(): string {
  if (process.env.DEALS_URL) return process.env.DEALS_URL;
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'api-address.json'), 'utf8')) as { localUrl: string }).localUrl;
  } catch {
    return 'https://localhost:3000';
  }
}

const deals = createDealsClient({ baseUrl: apiUrl(), apiKey: demo.api_key, v3: { username: demo.username, password: demo.password } });

/** A call's data, or, when the API refused it, its status and error body printed and the run ended. */
function must<T>(what: string, reply: { data?: T; error?: unknown; response: Response }): T {
  if (reply.data !== undefined) return reply.data;
  console.error(`${what}: ${reply.response.status}`, JSON.stringify(reply.error, null, 2));
  process.exit(1);
}

/** The card to store: one of the simulated processor's test cards (docs/api.md, "Purchases and the test cards"). */
const cardNumber = process.env.CARD_NUMBER;

async function main() {
  if (!cardNumber) throw new Error('set CARD_NUMBER to a card the simulated processor approves (docs/api.md)');
  // #region README: from here to the region's end, the README shows these lines as they are.
  // v3 list (HTTP basic), then one deal's v1 shape (api_key): prices are integer cents.
  const query = { fields: 'id,title,type', filter: 'region[new-york]', per_page: 20 };
  const list = must('listing deals', await deals.GET('/api/v3/deals', { params: { query } }));
  const dealId = list.deals.find((d) => d.type === 'daily-deal' || d.type === 'on-going')?.id;
  if (!dealId) throw new Error('no deal of New York to buy: is the demo catalogue loaded (DEMO_DATA)?');
  const price = must('reading the deal', await deals.GET('/deals/{deal_id}', { params: { path: { deal_id: dealId } } })).deal.current_price;

  const person = { email: `grace+${Date.now()}@example.com`, first_name: 'Grace', last_name: 'Hopper' };
  const user = must('making the user', await deals.POST('/users', { body: person }));
  const stored = { user_id: user.user_id, number: cardNumber, verification_value: '123', month: 12, year: 2030, zip_code: '10001' };
  const card = must('storing the card', await deals.POST('/credit_cards', { body: stored }));
  const order = {
    deal_id: dealId,
    quantity: 1,
    user_id: user.user_id,
    credit_card_id: card.credit_card_id,
    expected_price_per_unit: price,
  };
  // What it would be, making nothing (a dry run), then the purchase.
  const foreseen = must('a dry run', await deals.POST('/purchases/dry_run', { body: order }));
  console.log(foreseen.purchase.amount, foreseen.availability.num_left); // <cents> <units left>
  const { purchase } = must('buying', await deals.POST('/purchases', { body: order }));
  // The purchase id is what `npm run cli -- audit:purchase <id>` takes.
  console.log(purchase.id, purchase.payment_state, purchase.amount, purchase.coupons![0].print_url); // P7… charged <cents> https://…/print?key=…

  const coupon_id = purchase.coupons![0].id;
  const redeemed = must('redeeming', await deals.PUT('/coupons/{coupon_id}/redeem', { params: { path: { coupon_id } } }));
  console.log(redeemed.coupon.state); // redeemed
  // Redeeming again is refused: the error body says why.
  const again = await deals.PUT('/coupons/{coupon_id}/redeem', { params: { path: { coupon_id } } });
  console.log(again.response.status, again.error?.error_type, again.error?.error_msg); // 422 validation_failed state is already redeemed
  // #endregion README
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
