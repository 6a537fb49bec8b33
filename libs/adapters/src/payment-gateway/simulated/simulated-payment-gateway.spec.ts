import { CardDetails, CardRejected, TEST_CARD_NUMBERS } from '@deals/kernel';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The processor names brands itself; this checks it names them as the service's card rules do.
import { cardBrand } from '@deals/accounts/domain/card/card-number';
import { WriteOutcomeUnknown } from '../../sqlite/write-thread';
import { SimulatedPaymentGateway, TEST_CARDS } from './simulated-payment-gateway.adapter';

const pepper = Buffer.alloc(32, 1);
const card = (number: string, cvv = '123'): CardDetails => ({ number, cvv, month: 12, year: 2030, zip: '94107' });
const charge = (token: string, idempotencyKey: string, amountCents = 1500) => ({
  token,
  amountCents,
  idempotencyKey,
  description: 'deal 42',
});

describe('SimulatedPaymentGateway', () => {
  it('gives behaviours to published test cards only (the sandbox takes those)', () => {
    for (const number of Object.keys(TEST_CARDS)) expect(TEST_CARD_NUMBERS).toContain(number);
  });

  let dir: string;
  let file: string;
  let gateway: SimulatedPaymentGateway;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-'));
    file = join(dir, 'vault.sqlite');
    gateway = new SimulatedPaymentGateway(file, { pepper, slowMs: 150 });
  });
  afterEach(async () => {
    await gateway.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('tokenize', () => {
    it('returns a token, the brand, the last four digits and a fingerprint', async () => {
      const tokenized = await gateway.tokenize(card('4242 4242 4242 4242'));
      expect(tokenized).toEqual({
        token: expect.stringMatching(/^tok_[A-Za-z0-9_-]{32}$/),
        brand: 'Visa',
        last4: '4242',
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    });

    it.each(['4242424242424242', '5555555555554444', '2223003122003222', '6011111111111117', '3566002020360505', '6200000000000005'])(
      'names the brand of %s as the card rules do',
      async (number) => {
        expect((await gateway.tokenize(card(number))).brand).toBe(cardBrand(number));
      },
    );

    it('gives a new token each time', async () => {
      const [a, b] = [await gateway.tokenize(card('4242424242424242')), await gateway.tokenize(card('4242424242424242'))];
      expect(a.token).not.toBe(b.token);
    });

    it.each([
      ['a number failing the Luhn check', card('4242424242424241')],
      ['a short number', card('424242424242424')],
      ['an unsupported brand', card('7000000000000009')],
      ['a 4-digit security code', card('4242424242424242', '1234')],
      ['month 13', { ...card('4242424242424242'), month: 13 }],
    ])('rejects %s without repeating the card data', async (_, details) => {
      const error = await gateway.tokenize(details).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CardRejected);
      expect(String((error as Error).message)).not.toMatch(/\d{4}/);
    });
  });

  describe('fingerprint', () => {
    it('is the same for the same number, however it is typed', async () => {
      const a = await gateway.tokenize(card('4242424242424242', '111'));
      const b = await gateway.tokenize(card('4242-4242-4242-4242', '222'));
      expect(a.fingerprint).toBe(b.fingerprint);
    });

    it('differs between numbers, even with the same last four digits', async () => {
      const a = await gateway.tokenize(card('4242424242424242'));
      const b = await gateway.tokenize(card('5555555555554444'));
      const c = await gateway.tokenize(card('4000000000024242'));
      expect(new Set([a.fingerprint, b.fingerprint, c.fingerprint]).size).toBe(3);
    });

    it('is the same in another gateway with the same pepper and different with another pepper', async () => {
      const same = new SimulatedPaymentGateway(join(dir, 'same.sqlite'), { pepper });
      const other = new SimulatedPaymentGateway(join(dir, 'other.sqlite'), { pepper: Buffer.alloc(32, 2) });
      try {
        const mine = (await gateway.tokenize(card('4242424242424242'))).fingerprint;
        expect((await same.tokenize(card('4242424242424242'))).fingerprint).toBe(mine);
        expect((await other.tokenize(card('4242424242424242'))).fingerprint).not.toBe(mine);
      } finally {
        await Promise.all([same.close(), other.close()]);
      }
    });

    it('refuses to run without a real pepper', () => {
      expect(() => new SimulatedPaymentGateway(join(dir, 'x.sqlite'), { pepper: Buffer.alloc(0) })).toThrow(/pepper/);
    });
  });

  describe('charge', () => {
    it('approves 4242424242424242 and any other valid number', async () => {
      for (const number of ['4242424242424242', '5555555555554444']) {
        const { token } = await gateway.tokenize(card(number));
        expect(await gateway.charge(charge(token, `k-${number}`))).toEqual({ status: 'approved', chargeId: expect.stringMatching(/^ch_/) });
      }
    });

    it('declines 4000000000000002', async () => {
      const { token } = await gateway.tokenize(card('4000000000000002'));
      expect(await gateway.charge(charge(token, 'k1'))).toEqual({ status: 'declined', reason: 'card declined' });
    });

    it('fails 4000000000000119 with a processor error', async () => {
      const { token } = await gateway.tokenize(card('4000000000000119'));
      expect(await gateway.charge(charge(token, 'k1'))).toEqual({ status: 'error', reason: 'processor error' });
    });

    it('approves 4000000000000259 after the configured delay', async () => {
      const { token } = await gateway.tokenize(card('4000000000000259'));
      const started = performance.now();
      const outcome = await gateway.charge(charge(token, 'k1'));
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      expect(outcome).toEqual({ status: 'approved', chargeId: expect.stringMatching(/^ch_/) });
    });

    it('charges once when its write thread stops before answering, whether or not the charge was committed', async () => {
      const { token } = await gateway.tokenize(card('4242424242424242'));
      const writer = (gateway as unknown as { writer: { run: (...args: unknown[]) => Promise<unknown> } }).writer;
      const run = writer.run.bind(writer);
      const lost = new WriteOutcomeUnknown(file, new Error('stopped'));
      // Committed, answer lost: the repeated write finds it.
      jest.spyOn(writer, 'run').mockImplementationOnce(async (kind, args) => {
        await run(kind, args);
        throw lost;
      });
      const committed = await gateway.charge(charge(token, 'lost-answer'));
      expect(committed).toEqual({ status: 'approved', chargeId: expect.stringMatching(/^ch_/) });
      expect(await gateway.chargeOutcome('lost-answer')).toEqual(committed);
      // Not committed: the repeated write makes it.
      jest.spyOn(writer, 'run').mockRejectedValueOnce(lost);
      const made = await gateway.charge(charge(token, 'lost-write'));
      expect(made).toEqual({ status: 'approved', chargeId: expect.stringMatching(/^ch_/) });
      expect(await gateway.chargeOutcome('lost-write')).toEqual(made);
    });

    it('answers an unknown token with an error', async () => {
      expect(await gateway.charge(charge('tok_unknown', 'k1'))).toEqual({ status: 'error', reason: 'unknown card token' });
    });

    it('returns the first outcome for a repeated key, also after a restart', async () => {
      const { token } = await gateway.tokenize(card('4242424242424242'));
      const first = await gateway.charge(charge(token, 'purchase-1'));
      expect(await gateway.charge(charge(token, 'purchase-1'))).toEqual(first);
      await gateway.close();
      gateway = new SimulatedPaymentGateway(file, { pepper });
      expect(await gateway.charge(charge(token, 'purchase-1'))).toEqual(first);
      expect(await gateway.charge(charge(token, 'purchase-2'))).not.toEqual(first);
    });

    it('returns the first decline for a repeated key', async () => {
      const { token } = await gateway.tokenize(card('4000000000000002'));
      const first = await gateway.charge(charge(token, 'k1'));
      expect(await gateway.charge(charge(token, 'k1'))).toEqual(first);
    });

    it('gives concurrent calls with one key one charge', async () => {
      const { token } = await gateway.tokenize(card('4000000000000259'));
      const outcomes = await Promise.all([1, 2, 3].map(() => gateway.charge(charge(token, 'k1'))));
      expect(new Set(outcomes.map((o) => JSON.stringify(o))).size).toBe(1);
    });

    it('refuses a key reused with another amount', async () => {
      const { token } = await gateway.tokenize(card('4242424242424242'));
      await gateway.charge(charge(token, 'k1', 1500));
      expect(await gateway.charge(charge(token, 'k1', 2500))).toEqual({
        status: 'error',
        reason: 'idempotency key reused with other parameters',
      });
    });

    it.each([0, -5, 12.5, Number.NaN])('rejects an amount of %p cents', async (amountCents) => {
      await expect(gateway.charge({ ...charge('tok_x', 'k1'), amountCents })).rejects.toThrow(RangeError);
    });
  });

  describe('refund', () => {
    let chargeId: string;
    beforeEach(async () => {
      const { token } = await gateway.tokenize(card('4242424242424242'));
      const outcome = await gateway.charge(charge(token, 'purchase-1', 1500));
      if (outcome.status !== 'approved') throw new Error('charge not approved');
      chargeId = outcome.chargeId;
    });

    it('refunds up to the charged amount, in parts', async () => {
      expect(await gateway.refund({ chargeId, amountCents: 1000, idempotencyKey: 'r1' })).toEqual({
        status: 'refunded',
        refundId: expect.stringMatching(/^re_/),
      });
      expect(await gateway.refund({ chargeId, amountCents: 600, idempotencyKey: 'r2' })).toEqual({
        status: 'refused',
        reason: 'refund exceeds what is left of the charge',
      });
      expect(await gateway.refund({ chargeId, amountCents: 500, idempotencyKey: 'r3' })).toMatchObject({ status: 'refunded' });
    });

    it('returns the first outcome for a repeated key without refunding twice', async () => {
      const first = await gateway.refund({ chargeId, amountCents: 1500, idempotencyKey: 'r1' });
      expect(await gateway.refund({ chargeId, amountCents: 1500, idempotencyKey: 'r1' })).toEqual(first);
      expect(await gateway.refund({ chargeId, amountCents: 1, idempotencyKey: 'r2' })).toMatchObject({ status: 'refused' });
    });

    const chargedTo = async (number: string) => {
      const { token } = await gateway.tokenize(card(number));
      const outcome = await gateway.charge(charge(token, `purchase-${number}`, 1500));
      if (outcome.status !== 'approved') throw new Error('charge not approved');
      return outcome.chargeId;
    };

    it("approves 4000000000005126's charges and refuses its refunds, once for each key", async () => {
      const refused = await chargedTo('4000000000005126');
      const outcome = await gateway.refund({ chargeId: refused, amountCents: 1500, idempotencyKey: 'r1' });
      expect(outcome).toEqual({ status: 'refused', reason: "the card's issuer refused the refund" });
      expect(await gateway.refundOutcome('r1')).toEqual(outcome);
    });

    it("refunds 4000000000007726's charges with the first answer lost: asked again, the key answers refunded, refunded once", async () => {
      const late = await chargedTo('4000000000007726');
      expect(await gateway.refund({ chargeId: late, amountCents: 1500, idempotencyKey: 'r1' })).toEqual({
        status: 'error',
        reason: 'the processor did not answer in time',
      });
      const again = await gateway.refund({ chargeId: late, amountCents: 1500, idempotencyKey: 'r1' });
      expect(again).toEqual({ status: 'refunded', refundId: expect.stringMatching(/^re_/) });
      expect(await gateway.refundOutcome('r1')).toEqual(again);
      expect(await gateway.refund({ chargeId: late, amountCents: 1, idempotencyKey: 'r2' })).toMatchObject({ status: 'refused' });
    });

    it('refuses an unknown charge', async () => {
      expect(await gateway.refund({ chargeId: 'ch_nope', amountCents: 100, idempotencyKey: 'r1' })).toEqual({
        status: 'refused',
        reason: 'unknown charge',
      });
    });
  });

  it('keeps no card number, CVV or pepper in its files', async () => {
    const cards = [card('4242424242424242', '739'), card('5555555555554444', '864'), card('4000000000000259', '571')];
    const ids: string[] = [];
    for (const [i, details] of cards.entries()) {
      const { token } = await gateway.tokenize(details);
      const outcome = await gateway.charge(charge(token, `k${i}`));
      ids.push(token, outcome.status === 'approved' ? outcome.chargeId : '');
    }
    const scan = () => {
      const files = readdirSync(dir).filter((name) => name.startsWith('vault.sqlite'));
      expect(files.length).toBeGreaterThan(0);
      for (const name of files) {
        const bytes = readFileSync(join(dir, name));
        expect(bytes.includes(pepper)).toBe(false);
        // Random ids may hold any three digits by chance; the CVV search skips them.
        let text = bytes.toString('latin1');
        for (const id of ids.filter(Boolean)) text = text.split(id).join('');
        for (const { number, cvv } of cards) {
          const asInteger = Buffer.alloc(8);
          asInteger.writeBigUInt64BE(BigInt(number));
          expect(bytes.includes(number)).toBe(false);
          expect(bytes.includes(Buffer.from(number, 'utf16le'))).toBe(false);
          expect(bytes.includes(asInteger)).toBe(false);
          expect(text.includes(cvv)).toBe(false);
        }
      }
    };
    scan(); // the WAL file is still there
    await gateway.close();
    scan(); // everything checkpointed into the main file
  });
});
