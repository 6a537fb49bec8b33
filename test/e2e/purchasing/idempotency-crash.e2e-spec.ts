import Database from 'better-sqlite3';
import { SystemClock } from '@deals/kernel';
import { join } from 'node:path';
import { TestApi } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { tempDir } from '../../support/temp-dir';

/** The charges the simulated processor recorded, by purchase (its idempotency key). */
function charges(dataDir: string): string[] {
  const vault = new Database(join(dataDir, 'payment-vault.sqlite'), { readonly: true });
  try {
    return (vault.prepare('SELECT idempotency_key AS id FROM charges').all() as Array<{ id: string }>).map((r) => r.id);
  } finally {
    vault.close();
  }
}

/**
 * A purchase sent with an Idempotency-Key whose process is SIGKILLed while the card is being charged:
 * its repeat, to the process started again on the same data, answers the one purchase (settled by
 * the recovery from the processor's record) and never charges again.
 */
describe('an Idempotency-Key across a SIGKILL in the middle of a purchase', () => {
  const dir = tempDir('idempotency-crash');
  afterAll(() => dir.remove());

  it('answers the purchase the killed process started, charged once', async () => {
    // The partner and the catalogue written by a service in this process, stopped before the API process starts on its data.
    const setup = await TestApi.start({ dataDir: dir.path, clock: new SystemClock() });
    const partner = await setup.createPartner('Crash');
    await setup.importRegions([chicago]);
    const start = new Date(Date.now() - 86_400_000).toISOString();
    const end = new Date(Date.now() + 7 * 86_400_000).toISOString();
    await setup.importDeals([{ ...spaDay, quantity: 10, start_at: start, end_at: end }]);
    await setup.stop();
    const key = `?api_key=${partner.apiKey}`;
    const port = await freePort();
    // The slow test card: the processor records the charge, then answers after SLOW_CARD_MS.
    let api = await ApiProcess.start(dir.path, port, { SLOW_CARD_MS: '20000' });
    const userId = (await api.call('POST', `/users${key}`, { email: 'crash@example.com' })).body.user_id;
    const card = { user_id: userId, number: '4000000000000259', verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
    const cardId = (await api.call('POST', `/credit_cards${key}`, card)).body.credit_card_id;
    const order = { deal_id: 'chicago-spa-day', quantity: 2, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 };
    const headers = { 'idempotency-key': 'order-7731-attempt' };

    const cut = api.callWithHeaders('POST', `/purchases${key}`, order, headers).catch((error: Error) => error);
    const deadline = Date.now() + 30_000;
    while (charges(dir.path).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(charges(dir.path)).toHaveLength(1);
    await api.kill();
    expect(await cut).toBeInstanceOf(Error);

    api = await ApiProcess.start(dir.path, port, { SLOW_CARD_MS: '20000' });
    try {
      const again = await api.callWithHeaders('POST', `/purchases${key}`, order, headers);
      expect(again.status).toBe(200);
      const [charged] = charges(dir.path);
      expect(again.body.purchase).toMatchObject({
        id: charged,
        payment_state: 'charged',
        fulfillment_state: 'fulfilled',
        number_bought: 2,
        user_id: userId,
      });
      expect(again.body.purchase.coupons).toHaveLength(2);
      // Answered from now on as kept, and never charged again.
      const third = await api.callWithHeaders('POST', `/purchases${key}`, order, headers);
      expect(third.body).toEqual(again.body);
      expect(charges(dir.path)).toEqual([charged]);
      const purchases = (await api.call('GET', `/users/${userId}/purchases${key}`)).body.purchases;
      expect(purchases.map((p: { id: string }) => p.id)).toEqual([charged]);
      expect((await api.call('GET', `/deals/chicago-spa-day${key}`)).body.deal.num_left).toBe(8);
    } finally {
      await api.stop();
    }
  }, 120_000);
});
