import { EventStore, handleCommand, ManualClock } from '@deals/kernel';
import { transactionReferenceDecider, transactionReferenceStream } from '@deals/purchasing/domain/purchase/resale-claim';
import { TestApi } from '../../support/api-harness';
import { affiliate, cardLinked, chicago, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';

describe('resellers: POST /api/v3/resellers/purchases, GET and cancel /api/v3/coupons', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let basic: { username: string; password: string };
  let apiKey: string;
  let other: { username: string; password: string };
  let partnerId: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    const partner = await api.createPartner('Reseller');
    basic = { username: partner.username, password: partner.password };
    apiKey = partner.apiKey;
    partnerId = partner.partnerId;
    const second = await api.createPartner('Other reseller');
    other = { username: second.username, password: second.password };
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...spaDay, quantity: 3 },
      { ...ongoingShipped, quantity: 5 },
      cardLinked,
      { ...affiliate, state: 'in-flight', start_at: '2026-06-01T00:00:00Z', quantity: 10 },
      { ...spaDay, id: 'chicago-spa-paused', state: 'paused', quantity: 10 },
      { ...spaDay, id: 'chicago-spa-ended', start_at: '2026-06-01T00:00:00Z', end_at: '2026-06-10T00:00:00Z', quantity: 10 },
      { ...spaDay, id: 'chicago-spa-submitted', state: 'submitted', quantity: 10 },
      { ...spaDay, id: 'chicago-spa-expired', expires_at: '2026-06-15T11:00:00Z', quantity: 10 },
    ]);
  });
  afterAll(() => api.close());

  const sale = (body: Record<string, unknown>, as = basic) => api.call('POST', '/api/v3/resellers/purchases', { basic: as, body });
  const voucher = {
    deal_id: 'chicago-spa-day',
    quantity: 2,
    transaction_reference: 'tx-1',
    transaction_date: '2026-06-15T11:59:00Z',
    transaction_amount: 9000,
    first_name: 'Ray',
    last_name: 'Sell',
  };

  it('records a voucher sale: the reseller purchase object with coupons (no print_url)', async () => {
    const reply = await sale(voucher);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      id: expect.any(String),
      transaction_reference: 'tx-1',
      amount: 9000,
      number_bought: 2,
      fulfillment_state: 'fulfilled',
      created_at: 'Mon Jun 15 12:00:00 UTC 2026',
      deal: {
        id: 'chicago-spa-day',
        title: 'Spa day for two',
        image_url_abs: 'https://deals.example.com/images/deals/chicago-spa-day.jpg',
      },
      coupons: [expect.objectContaining({ state: 'valid', deal_id: 'chicago-spa-day' }), expect.objectContaining({ state: 'valid' })],
    });
    expect(reply.body.coupons[0]).not.toHaveProperty('print_url');
    // The reservation names its reference: recovery finds the sale's terms under it after a stop.
    const [reserved] = await api.get(EventStore).readStream(`purchase-${reply.body.id}`);
    expect(reserved.data).toMatchObject({ via: 'reseller', transactionReference: 'tx-1' });
  });

  it('answers the first purchase again for a repeated transaction_reference, recording nothing new', async () => {
    const first = (await sale({ ...voucher, transaction_reference: 'tx-repeat', quantity: 1 })).body;
    const again = await sale({ ...voucher, transaction_reference: 'tx-repeat', quantity: 1 });
    expect(again.body).toEqual(first);
    // A retry is the same transaction whatever its body now says: a deal since removed, a field left out.
    const retried = await sale({ deal_id: 'no-such-deal', transaction_reference: 'tx-repeat' });
    expect([retried.status, retried.body]).toEqual([200, first]);
    const deal = (await api.call('GET', '/api/v3/deals?fields=id,num_left&filter=region[chicago]', { basic })).body.deals.find(
      (d: { id: string }) => d.id === 'chicago-spa-day',
    );
    expect(deal.num_left).toBe(0);
    // Another partner may use the same reference for its own sale.
    expect((await sale({ ...voucher, transaction_reference: 'tx-repeat', quantity: 1 }, other)).body).toEqual({
      status: 'error',
      error_type: 'cannot_fulfill',
      error_msg: 'the deal is sold out',
    });
  });

  it('requires the fields of the deal kind, quantity defaulting to 1 only where it is not required', async () => {
    const missing = await sale({ deal_id: 'chicago-spa-day' });
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'transaction_reference',
      'transaction_date',
      'transaction_amount',
      'quantity',
      'first_name',
      'last_name',
    ]);
    const bulk = await sale({ ...voucher, transaction_reference: 'tx-bulk', quantity: 1001 });
    expect(bulk.body.errors).toEqual([
      { type: 'invalid', resource: 'purchase', field: 'quantity', message: 'must be a whole number from 1 to 1000' },
    ]);
    const shipped = await sale({ ...voucher, deal_id: 'chicago-headphones', transaction_reference: 'tx-ship' });
    expect(shipped.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'address_type',
      'address1',
      'address2',
      'postal_code',
      'city',
      'state',
      'country',
      'telephone',
    ]);
    for (const date of ['1', '2026', 'June 15, 2026', '2026-13-45', '2026-06-15 10:00']) {
      const bad = await sale({
        deal_id: 'chicago-coffee-back',
        transaction_reference: 'tx-date',
        transaction_date: date,
        transaction_amount: 2500,
      });
      expect([date, bad.status, bad.body.errors]).toEqual([
        date,
        422,
        [{ type: 'invalid', resource: 'purchase', field: 'transaction_date', message: 'must be an ISO 8601 date and time' }],
      ]);
    }
    const unbounded = await sale({
      ...voucher,
      transaction_reference: 'x'.repeat(256),
      first_name: 'Ann\u0085\u202eX',
      last_name: 'Se\u0007ll',
    });
    expect(unbounded.body.errors).toEqual([
      { type: 'invalid', resource: 'purchase', field: 'first_name', message: 'must not hold control characters' },
      { type: 'invalid', resource: 'purchase', field: 'last_name', message: 'must not hold control characters' },
      { type: 'invalid', resource: 'purchase', field: 'transaction_reference', message: 'must be at most 255 characters' },
    ]);
    // A NUL is refused before the call's own checks, as in every call's text.
    const nul = await sale({ ...voucher, transaction_reference: 'tx-nul', last_name: 'Se\u0000ll' });
    expect([nul.status, nul.body.errors]).toEqual([
      422,
      [{ type: 'invalid', resource: 'request', field: 'last_name', message: 'must be well-formed Unicode text without NUL' }],
    ]);
    // 255 characters is the bound, counted as characters: 255 emoji (510 UTF-16 units) pass it.
    const long = await sale({
      ...voucher,
      deal_id: 'chicago-coffee-back',
      transaction_reference: 'tx-long',
      last_name: '\u{1F600}'.repeat(255),
    });
    expect([long.status, long.body.errors]).toEqual([200, undefined]);
    const linked = await sale({
      deal_id: 'chicago-coffee-back',
      transaction_reference: 'tx-card',
      transaction_date: '2026-06-15T10:00:00Z',
      transaction_amount: 2500,
    });
    expect(linked.status).toBe(200);
    expect(linked.body.number_bought).toBe(1);
  });

  it('checks and cancels a coupon once, with the reseller coupon bodies', async () => {
    const coupon = (
      await sale({
        ...voucher,
        deal_id: 'chicago-headphones',
        quantity: 2,
        transaction_reference: 'tx-goods',
        address_type: 'home',
        address1: '1 Lake St',
        address2: 'Apt 2',
        postal_code: '60601',
        city: 'Chicago',
        state: 'IL',
        country: 'US',
        telephone: '555-0100',
      })
    ).body.coupons[0];
    const spa = (
      await sale({
        deal_id: 'chicago-coffee-back',
        transaction_reference: 'tx-cancel',
        transaction_date: '2026-06-15T10:00:00Z',
        transaction_amount: 2500,
      })
    ).body.coupons[0];
    expect((await api.call('GET', `/api/v3/coupons/${spa.id}`, { basic })).body.coupon).toMatchObject({ id: spa.id, state: 'valid' });
    expect((await api.call('GET', `/api/v3/coupons/${spa.id}.json`, { basic })).body.coupon).toMatchObject({ id: spa.id, state: 'valid' });
    const leftBefore = (await api.call('GET', '/api/v3/deals?fields=id,num_left&filter=region[chicago]', { basic })).body.deals.find(
      (d: { id: string }) => d.id === 'chicago-coffee-back',
    ).num_left;
    expect((await api.call('DELETE', `/api/v3/coupons/${spa.id}/cancel`, { basic })).body).toEqual({ status: 'success' });
    // A cancelled coupon's unit is not put back on sale (docs/decisions.md).
    const leftAfter = (await api.call('GET', '/api/v3/deals?fields=id,num_left&filter=region[chicago]', { basic })).body.deals.find(
      (d: { id: string }) => d.id === 'chicago-coffee-back',
    ).num_left;
    expect(leftAfter).toBe(leftBefore);
    expect((await api.call('GET', `/api/v3/coupons/${spa.id}`, { basic })).body.coupon.state).toBe('cancelled');
    const twice = await api.call('DELETE', `/api/v3/coupons/${spa.id}/cancel`, { basic });
    expect([twice.status, twice.body]).toEqual([
      422,
      {
        status: 'error',
        message: 'the coupon cannot be cancelled',
        code: '422',
        errors: { coupons: ['the coupons are already part of another refund'] },
      },
    ]);
    const goods = await api.call('DELETE', `/api/v3/coupons/${coupon.id}/cancel`, { basic });
    expect(goods.body.errors).toEqual({ coupons: ['the barcode is non-refundable'] });
    const unknown = await api.call('DELETE', '/api/v3/coupons/nothing/cancel', { basic });
    expect([unknown.status, unknown.body]).toEqual([404, { status: 'error', message: 'coupon not found', type: 'find_failed' }]);
    expect((await api.call('GET', '/api/v3/coupons/nothing', { basic })).body).toEqual({
      status: 'error',
      error_type: 'find_failed',
      error_msg: 'coupon not found',
    });
    expect((await api.call('GET', `/api/v3/coupons/${spa.id}`, { basic: other })).status).toBe(404);
  });

  it("records no sale of a deal that is not on sale, not sold, past its vouchers' expiry, or over the per-user limit in one transaction", async () => {
    const refusals: Array<[string, number, string]> = [
      ['chicago-spa-paused', 1, 'the deal is not on sale'],
      ['chicago-spa-ended', 1, 'the deal is not on sale'],
      ['chicago-spa-submitted', 1, 'the deal is not on sale'],
      ['chicago-free-trial', 1, 'an affiliate deal is not bought'],
      ['chicago-spa-expired', 1, "the deal's vouchers have expired"],
    ];
    for (const [dealId, quantity, message] of refusals) {
      const reply = await sale({ ...voucher, deal_id: dealId, quantity, transaction_reference: `tx-refused-${dealId}` });
      expect([reply.status, reply.body]).toEqual([422, { status: 'error', error_type: 'cannot_fulfill', error_msg: message }]);
    }
    // spaDay's max_per_user is 2; its stock here is used up, so a fresh deal with stock shows the limit.
    await api.importDeals([{ ...spaDay, id: 'chicago-spa-limit', quantity: 10 }]);
    const tooMany = await sale({ ...voucher, deal_id: 'chicago-spa-limit', quantity: 3, transaction_reference: 'tx-too-many' });
    expect([tooMany.status, tooMany.body]).toEqual([
      422,
      { status: 'error', error_type: 'cannot_fulfill', error_msg: 'at most 2 per user' },
    ]);
    const { body } = await api.call('GET', '/api/v3/deals?fields=id,num_left&filter=region[chicago]', { basic });
    expect(body.deals.find((d: { id: string }) => d.id === 'chicago-spa-limit').num_left).toBe(10);
    // Nothing was held or sold on the refused deals.
    for (const id of ['chicago-spa-paused', 'chicago-spa-expired', 'chicago-free-trial']) {
      expect((await api.call('GET', `/deals/${id}`, { apiKey })).body.deal).toMatchObject({ number_sold: 0 });
    }
  });

  it('cancels no coupon of a purchase the service charged: its buyer would be left charged with nothing to redeem', async () => {
    await api.importDeals([{ ...spaDay, id: 'chicago-spa-card', quantity: 5 }]);
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'card-buyer@example.com' } })).body.user_id;
    const cardId = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: userId, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const bought = await api.call('POST', '/purchases', {
      apiKey,
      body: { deal_id: 'chicago-spa-card', quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 },
    });
    expect(bought.status).toBe(200);
    const [coupon] = bought.body.purchase.coupons;
    const refused = await api.call('DELETE', `/api/v3/coupons/${coupon.id}/cancel`, { basic });
    expect([refused.status, refused.body]).toEqual([
      422,
      { status: 'error', message: 'the coupon cannot be cancelled', code: '422', errors: { coupons: ['the barcode is non-refundable'] } },
    ]);
    expect((await api.call('GET', `/api/v3/coupons/${coupon.id}`, { basic })).body.coupon.state).toBe('valid');
  });

  it("answers every 422 of the cancel in the reseller coupon error body, a refusal made before the coupon is looked at with the error body's fields beside", async () => {
    await api.importDeals([{ ...spaDay, id: 'chicago-spa-keyed', quantity: 5 }]);
    const [first, second] = (await sale({ ...voucher, deal_id: 'chicago-spa-keyed', transaction_reference: 'tx-keyed' })).body.coupons;
    const cancel = (id: string, key: string) =>
      api.call('DELETE', `/api/v3/coupons/${id}/cancel`, { basic, headers: { 'Idempotency-Key': key } });
    expect((await cancel(first.id, 'cancel-key-1')).status).toBe(200);

    const reused = await cancel(second.id, 'cancel-key-1');
    const reuse = 'this Idempotency-Key was used for another request (method, path, query or body differ); a new request needs a new key';
    expect([reused.status, reused.body]).toEqual([
      422,
      {
        status: 'error',
        message: reuse,
        code: '422',
        errors: { coupons: [reuse] },
        error_type: 'idempotency_key_reused',
        error_msg: reuse,
      },
    ]);
    expect((await api.call('GET', `/api/v3/coupons/${second.id}`, { basic })).body.coupon.state).toBe('valid');

    // The coupon's own refusal is kept as it was sent, and sent again so.
    const refused = await cancel(first.id, 'cancel-key-2');
    const again = await cancel(first.id, 'cancel-key-2');
    expect([refused.status, refused.body]).toEqual([
      422,
      {
        status: 'error',
        message: 'the coupon cannot be cancelled',
        code: '422',
        errors: { coupons: ['the coupons are already part of another refund'] },
      },
    ]);
    expect([again.status, again.headers['idempotent-replayed'], again.body]).toEqual([422, 'true', refused.body]);

    // Text refused at the edge: the reason names the field and the rule, never the text sent.
    const nul = await api.call('DELETE', `/api/v3/coupons/${second.id}%00x/cancel`, { basic });
    expect(nul.status).toBe(422);
    expect(nul.body).toMatchObject({
      status: 'error',
      code: '422',
      error_type: 'validation_failed',
      errors: { coupons: ['coupon_id must be well-formed Unicode text without NUL'] },
    });
    expect(JSON.stringify(nul.body)).not.toContain(second.id);

    const notJson = await api.call('DELETE', `/api/v3/coupons/${second.id}/cancel`, { basic, jsonText: '{"reason":' });
    expect(notJson.status).toBe(422);
    expect(notJson.body).toMatchObject({
      status: 'error',
      code: '422',
      error_type: 'validation_failed',
      errors: { coupons: ['body is not valid JSON'] },
    });
    expect((await api.call('GET', `/api/v3/coupons/${second.id}`, { basic })).body.coupon.state).toBe('valid');
  });

  it('answers the same purchase to every one of several sales sent at once with one transaction_reference, selling once', async () => {
    await api.importDeals([{ ...spaDay, id: 'chicago-spa-burst', quantity: 10 }]);
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => sale({ ...voucher, deal_id: 'chicago-spa-burst', quantity: 2, transaction_reference: 'tx-burst' })),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    for (const r of replies) expect(r.body.coupons).toHaveLength(2);
    expect((await api.call('GET', '/deals/chicago-spa-burst', { apiKey })).body.deal).toMatchObject({ number_sold: 2, num_left: 8 });
  });

  it('completes the first sale for repeats sent at once that name another deal or quantity: no units held elsewhere, coupons as units', async () => {
    await api.importDeals([
      { ...spaDay, id: 'chicago-spa-one', quantity: 10, max_per_user: 5 },
      { ...spaDay, id: 'chicago-spa-two', quantity: 10, max_per_user: 5 },
    ]);
    for (let round = 0; round < 5; round++) {
      const bodies = [
        { ...voucher, deal_id: 'chicago-spa-one', quantity: 1, transaction_reference: `tx-mixed-${round}` },
        { ...voucher, deal_id: 'chicago-spa-two', quantity: 2, transaction_reference: `tx-mixed-${round}` },
      ];
      const replies = await Promise.all([...bodies, ...bodies].map((body) => sale(body)));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
      expect(new Set(replies.map((r) => r.body.coupons.length)).size).toBe(1);
    }
    await api.settle();
    const one = (await api.call('GET', '/deals/chicago-spa-one', { apiKey })).body.deal;
    const two = (await api.call('GET', '/deals/chicago-spa-two', { apiKey })).body.deal;
    // Every unit taken is sold (none held by a repeat), and each deal sold whole sales of its own quantity.
    expect(one.num_left + one.number_sold).toBe(10);
    expect(two.num_left + two.number_sold).toBe(10);
    expect(one.number_sold + two.number_sold / 2).toBe(5);
  });

  it("records one body's terms for repeats sent at once with different bodies: quantity, amount and buyer agree", async () => {
    await api.importDeals([{ ...spaDay, id: 'chicago-spa-terms', quantity: 1000, max_per_user: undefined }]);
    for (let round = 0; round < 8; round++) {
      const bodies = [1, 2, 3].map((quantity) => ({
        ...voucher,
        deal_id: 'chicago-spa-terms',
        transaction_reference: `tx-terms-${round}`,
        quantity,
        transaction_amount: 6000 * quantity,
        first_name: `N${quantity}`,
        transaction_date: `2026-06-1${quantity}T10:00:00Z`,
      }));
      const replies = await Promise.all([...bodies, ...bodies].map((body) => sale(body)));
      expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(new Set(replies.map((r) => JSON.stringify(r.body))).size).toBe(1);
      const { id, number_bought: bought, amount } = replies[0].body;
      expect(amount).toBe(6000 * bought);
      const resold = (await api.get(EventStore).readStream(`purchase-${id}`)).find((e) => e.type === 'PurchaseResold')!.data as {
        buyer: { first_name: string };
        transactionDate: string;
      };
      expect([resold.buyer.first_name, resold.transactionDate]).toEqual([`N${bought}`, `2026-06-1${bought}T10:00:00Z`]);
    }
  });

  it("completes a sale stopped after its claim with the claiming body's terms, not the retry's", async () => {
    await api.importDeals([{ ...spaDay, id: 'chicago-spa-stopped', quantity: 10, max_per_user: undefined }]);
    const terms = { amountCents: 4500, transactionDate: '2026-06-14T09:00:00Z', buyer: { first_name: 'First', last_name: 'Body' } };
    await handleCommand(
      api.get(EventStore),
      transactionReferenceStream(partnerId, 'tx-stopped'),
      transactionReferenceDecider,
      {
        type: 'ClaimTransactionReference',
        data: { partnerId, transactionReference: 'tx-stopped', purchaseId: 'stopped-p', dealId: 'chicago-spa-stopped', quantity: 1, terms },
      },
      { now: clock.now(), metadata: { actor: 'test', partnerId } },
    );
    const retry = await sale({
      ...voucher,
      deal_id: 'chicago-spa-stopped',
      quantity: 1,
      transaction_amount: 9999,
      first_name: 'Retry',
      transaction_reference: 'tx-stopped',
    });
    expect([retry.status, retry.body.id, retry.body.amount]).toEqual([200, 'stopped-p', 4500]);
    const resold = (await api.get(EventStore).readStream('purchase-stopped-p')).find((e) => e.type === 'PurchaseResold')!.data;
    expect(resold).toMatchObject({
      amountCents: 4500,
      transactionDate: '2026-06-14T09:00:00Z',
      buyer: { first_name: 'First', last_name: 'Body' },
    });
  });

  it('frees a reference whose sale was refused: a retry is a new sale of what it names, never the refused one completed later', async () => {
    await api.importDeals([
      { ...spaDay, id: 'chicago-spa-gone', quantity: 0, max_per_user: undefined },
      { ...spaDay, id: 'chicago-spa-stocked', quantity: 10, max_per_user: undefined },
    ]);
    const refused = await sale({
      ...voucher,
      deal_id: 'chicago-spa-gone',
      quantity: 1,
      transaction_amount: 4500,
      transaction_reference: 'tx-after-refusal',
    });
    expect([refused.status, refused.body]).toEqual([
      422,
      { status: 'error', error_type: 'cannot_fulfill', error_msg: 'the deal is sold out' },
    ]);
    // A retry naming another deal sells what it names.
    const retry = await sale({
      ...voucher,
      deal_id: 'chicago-spa-stocked',
      quantity: 2,
      transaction_amount: 9000,
      transaction_reference: 'tx-after-refusal',
    });
    expect([retry.status, retry.body.deal.id, retry.body.number_bought, retry.body.amount]).toEqual([200, 'chicago-spa-stocked', 2, 9000]);
    // Once restocked, the first deal sells nothing under the reference: its sale is the retry's.
    await api.importDeals([{ ...spaDay, id: 'chicago-spa-gone', quantity: 10, max_per_user: undefined }]);
    const again = await sale({
      ...voucher,
      deal_id: 'chicago-spa-gone',
      quantity: 1,
      transaction_amount: 4500,
      transaction_reference: 'tx-after-refusal',
    });
    expect(again.body).toEqual(retry.body);
    await api.settle();
    expect((await api.call('GET', '/deals/chicago-spa-gone', { apiKey })).body.deal).toMatchObject({ number_sold: 0, num_left: 10 });
    expect((await api.call('GET', '/deals/chicago-spa-stocked', { apiKey })).body.deal).toMatchObject({ number_sold: 2, num_left: 8 });
  });
});
