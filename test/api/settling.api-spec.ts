import { PaymentGateway } from '@deals/kernel';
import { RecoverInterruptedPayments } from '@deals/purchasing';
import { ApiRequest, ApiSpec } from '../support/api-spec';
import { chicago, spaDay } from '../support/catalogue-fixtures';
import { TEST_CARDS } from '../support/test-cards';

/**
 * The settling of a card purchase whose charge had no answer (the `recover-purchase` job's work),
 * at the API level: decided from the purchase's stream and the processor's record.
 */
describe('settling a card purchase left open (API tier)', () => {
  let api: ApiSpec;
  let apiKey: string;
  let userId: string;
  let cardId: string;

  beforeAll(async () => {
    api = await ApiSpec.build();
    ({ apiKey } = await api.givenPartner());
    await api.givenCatalogue([chicago], [{ ...spaDay, id: 'spa-one-each', quantity: 10, max_per_user: 1 }]);
    userId = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'settled@example.com' } })).body.user_id;
    const card = { user_id: userId, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
    cardId = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: card })).body.credit_card_id;
  });
  afterAll(() => api.close());

  const buy = (dealId: string): ApiRequest => ({
    method: 'POST',
    url: '/purchases',
    apiKey,
    body: { deal_id: dealId, quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 },
  });

  /** The next charge is made by the processor, and its answer lost on the way back (a dropped connection). */
  const loseNextChargeAnswer = () => {
    const gateway = api.get(PaymentGateway);
    const charge = gateway.charge.bind(gateway);
    const spy = jest.spyOn(gateway, 'charge').mockImplementationOnce(async (request) => {
      spy.mockRestore();
      await charge(request);
      throw new Error('socket hang up');
    });
  };

  it("keeps the deal's per-user limit when the settling takes fresh units in place of a lapsed hold", async () => {
    loseNextChargeAnswer();
    const unanswered = await api.send(buy('spa-one-each'));
    expect(unanswered.status).toBe(502);
    const first: string = unanswered.body.purchase_id;
    // The processor stays away past the hold's five minutes (the job's tries failing meanwhile).
    api.clock.advance(5 * 60_000 + 1000);
    // The user buys the deal's one unit each again: their first purchase's hold lapsed, so the limit allows it.
    const second = await api.send(buy('spa-one-each'));
    expect(second.status).toBe(200);

    await api.get(RecoverInterruptedPayments).settleNow(first);
    await api.settle();

    // The charged first purchase cannot have a unit more than the limit: its charge refunded, none sold to it.
    const settled = await api.send({ method: 'GET', url: `/purchases/${first}`, apiKey });
    expect(settled.body.purchase).toMatchObject({ payment_state: 'failed', fulfillment_state: 'released', coupons: [] });
    expect(await api.get(PaymentGateway).refundOutcome(`${first}-refund`)).toMatchObject({ status: 'refunded' });
    const deal = (await api.send({ method: 'GET', url: '/deals/spa-one-each', apiKey })).body.deal;
    expect(deal.number_sold).toBe(1);
  });
});
