// The README's quick start: the demo partner lists deals, makes a user, stores a card, buys and
// redeems the coupon, with the generated client. Run beside `npm start`:
//   CARD_NUMBER=<a card the simulated processor approves: docs/api.md> NODE_TLS_REJECT_UNAUTHORIZED=0 \
//     node -r @swc-node/register clients/typescript/examples/quickstart.ts
// (NODE_TLS_REJECT_UNAUTHORIZED trusts the demo's self-signed certificate; never set it against a real installation).
import { readFileSync } from 'node:fs';
import { createDealsClient } from '../src';

const demo = JSON.parse(readFileSync(`${process.env.DATA_DIR ?? 'data'}/demo-partner.json`, 'utf8')) as {
  api_key: string;
  username: string;
  password: string;
};
const deals = createDealsClient({
  baseUrl: process.env.DEALS_URL ?? `https://localhost:${process.env.PORT ?? 3000}`,
  apiKey: demo.api_key,
  v3: { username: demo.username, password: demo.password },
});

/** The card to store: one of the simulated processor's test cards (docs/api.md, "Purchases and the test cards"). */
const cardNumber = process.env.CARD_NUMBER;

async function main() {
  if (!cardNumber) throw new Error('set CARD_NUMBER to a card the simulated processor approves (docs/api.md)');
  // v3 list (HTTP basic), then one deal's v1 shape (api_key): prices are integer cents.
  const list = await deals.GET('/api/v3/deals', {
    params: { query: { fields: 'id,title,type', filter: 'region[new-york]', per_page: 20 } },
  });
  const dealId = list.data!.deals.find((d) => d.type === 'daily-deal' || d.type === 'on-going')!.id!;
  const { data: shown } = await deals.GET('/deals/{deal_id}', { params: { path: { deal_id: dealId } } });
  const price = shown!.deal.current_price;

  const user = await deals.POST('/users', { body: { email: `grace+${Date.now()}@example.com`, first_name: 'Grace', last_name: 'Hopper' } });
  const user_id = user.data!.user_id;
  const card = await deals.POST('/credit_cards', {
    body: { user_id, number: cardNumber, verification_value: '123', month: 12, year: 2030, zip_code: '10001' },
  });
  const bought = await deals.POST('/purchases', {
    body: { deal_id: dealId, quantity: 1, user_id, credit_card_id: card.data!.credit_card_id, expected_price_per_unit: price },
  });
  const purchase = bought.data!.purchase;
  console.log(purchase.payment_state, purchase.amount, purchase.coupons![0].print_url); // charged <cents> https://…/print?key=…

  const coupon_id = purchase.coupons![0].id;
  const redeemed = await deals.PUT('/coupons/{coupon_id}/redeem', { params: { path: { coupon_id } } });
  console.log(redeemed.data?.coupon.state); // redeemed
  const again = await deals.PUT('/coupons/{coupon_id}/redeem', { params: { path: { coupon_id } } });
  console.log(again.response.status, again.error?.error_type, again.error?.error_msg); // 422 validation_failed state is already redeemed
}

void main();
