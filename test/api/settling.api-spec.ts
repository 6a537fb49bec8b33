import { PaymentGateway, Scheduler } from '@deals/kernel';
import { RecoverInterruptedPayments } from '@deals/purchasing';
import { ApiRequest, ApiSpec } from '../support/api-spec';
import { chicago, spaDay } from '../support/catalogue-fixtures';
import { holdNextCharge } from '../support/held-charge';
import { REFUND_REFUSED_TEST_CARD, TEST_CARDS } from '../support/test-cards';

/**
 * Card purchases left open after their charge (no answer, a refund that failed, a settling while
 * the charge was on its way), at the API level: each settled from its stream and the processor's
 * record, the per-user limit kept and no charge left without its units or its refund.
 */
describe('settling a card purchase left open (API tier)', () => {
  let api: ApiSpec;
  let apiKey: string;
  let userId: string;
  let cardId: string;
  let refusingCardId: string;

  beforeAll(async () => {
    api = await ApiSpec.build();
    ({ apiKey } = await api.givenPartner());
    await api.givenCatalogue(
      [chicago],
      [
        { ...spaDay, id: 'spa-one-each', quantity: 10, max_per_user: 1 },
        { ...spaDay, id: 'spa-last-one', quantity: 1, max_per_user: undefined },
      ],
    );
    userId = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'settled@example.com' } })).body.user_id;
    const card = { user_id: userId, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
    cardId = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: card })).body.credit_card_id;
    const refusing = { ...card, number: REFUND_REFUSED_TEST_CARD };
    refusingCardId = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: refusing })).body.credit_card_id;
  });
  afterAll(() => api.close());

  const buy = (dealId: string, buyer = { userId: '', cardId: '' }): ApiRequest => ({
    method: 'POST',
    url: '/purchases',
    apiKey,
    body: {
      deal_id: dealId,
      quantity: 1,
      user_id: buyer.userId || userId,
      credit_card_id: buyer.cardId || cardId,
      expected_price_per_unit: 4900,
    },
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

  it('arms the settling of a purchase whose units were gone after its charge and whose refund failed', async () => {
    // Another user takes the deal's last unit while this purchase's hold lapses during its charge.
    const other = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'other@example.com' } })).body.user_id;
    const card = { user_id: other, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
    const otherCard = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: card })).body.credit_card_id;
    const held = holdNextCharge(api);
    const charging = api.send(buy('spa-last-one', { userId, cardId: refusingCardId }));
    await held.charging;
    api.clock.advance(5 * 60_000 + 1000);
    expect((await api.send(buy('spa-last-one', { userId: other, cardId: otherCard }))).status).toBe(200);
    held.release();
    const answered = await charging;
    // Charged, no unit to sell, and the processor refused the refund: the card keeps its charge.
    expect(answered.status).toBeGreaterThanOrEqual(500);
    const [reserved] = (await api.log.readAll({ after: null, maxCount: 10_000 })).filter(
      (e) => e.type === 'PurchaseReserved' && (e.data as { deal: { dealId: string } }).deal.dealId === 'spa-last-one',
    );
    const purchaseId = (reserved.data as { purchaseId: string }).purchaseId;
    const view = await api.send({ method: 'GET', url: `/purchases/${purchaseId}`, apiKey });
    expect(view.body.purchase).toMatchObject({ fulfillment_state: 'reserved' });
    // Its settling (a refund asked again, or the start undone) is armed: not left to the next start of a process.
    const jobs = await api.get(Scheduler).list(1000);
    expect(jobs.map((job) => job.id)).toContainEqual(expect.stringContaining(`recover-purchase-${purchaseId}`));
  });

  it('refunds a charge that completes after a settling recorded its purchase not paid (a charge slower than its lock)', async () => {
    await api.givenCatalogue([chicago], [{ ...spaDay, id: 'spa-slow-charge', quantity: 10, max_per_user: undefined }]);
    const buyer = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'slow@example.com' } })).body.user_id;
    const card = { user_id: buyer, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
    const buyerCard = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: card })).body.credit_card_id;
    // The charge is on its way to the processor, not recorded there yet, for longer than the charge lock.
    const gateway = api.get(PaymentGateway);
    const charge = gateway.charge.bind(gateway);
    let sent!: () => void;
    const charging = new Promise<void>((resolve) => (sent = resolve));
    let deliver!: () => void;
    const delivered = new Promise<void>((resolve) => (deliver = resolve));
    const spy = jest.spyOn(gateway, 'charge').mockImplementationOnce(async (request) => {
      spy.mockRestore();
      sent();
      await delivered;
      return charge(request);
    });
    const answer = api.send(buy('spa-slow-charge', { userId: buyer, cardId: buyerCard }));
    await charging;
    api.clock.advance(2 * 60_000 + 1000);
    // A worker starting beside the API settles what its lock no longer covers: the processor knows no charge yet.
    await api.get(RecoverInterruptedPayments).run({ othersMayBeBuying: true });
    deliver();
    const answered = await answer;
    await api.settle();
    const [reserved] = (await api.log.readAll({ after: null, maxCount: 10_000 })).filter(
      (e) => e.type === 'PurchaseReserved' && (e.data as { deal: { dealId: string } }).deal.dealId === 'spa-slow-charge',
    );
    const purchaseId = (reserved.data as { purchaseId: string }).purchaseId;
    // The processor charged the card; the purchase is recorded not paid and has no unit: the charge is refunded.
    expect(await gateway.chargeOutcome(purchaseId)).toMatchObject({ status: 'approved' });
    const view = (await api.send({ method: 'GET', url: `/purchases/${purchaseId}`, apiKey })).body.purchase;
    expect(view).toMatchObject({ fulfillment_state: 'released', coupons: [] });
    expect(await gateway.refundOutcome(`${purchaseId}-refund`)).toMatchObject({ status: 'refunded' });
    expect(answered).toMatchObject({ status: 422, body: { error_type: 'cannot_fufill' } });
  });
});
