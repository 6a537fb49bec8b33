import { CardRejected, TEST_CARD_NUMBERS } from '@deals/kernel';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The processor names brands itself; this checks it names them as the service's card rules do.
import { cardBrand } from '@deals/accounts/domain/card/card-number';
import { WriteOutcomeUnknown } from '../../sqlite/write-thread';
import { card, charge, pepper, simulatedProcessorContract } from '@deals/testing/contracts/simulated-processor.contract';
import { SimulatedPaymentGateway, TEST_CARDS } from './simulated-payment-gateway.adapter';
import { SqlitePaymentVault } from './sqlite-payment-vault';

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
    gateway = new SimulatedPaymentGateway(new SqlitePaymentVault(file), { pepper, slowMs: 150 });
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
      const same = new SimulatedPaymentGateway(new SqlitePaymentVault(join(dir, 'same.sqlite')), { pepper });
      const other = new SimulatedPaymentGateway(new SqlitePaymentVault(join(dir, 'other.sqlite')), { pepper: Buffer.alloc(32, 2) });
      try {
        const mine = (await gateway.tokenize(card('4242424242424242'))).fingerprint;
        expect((await same.tokenize(card('4242424242424242'))).fingerprint).toBe(mine);
        expect((await other.tokenize(card('4242424242424242'))).fingerprint).not.toBe(mine);
      } finally {
        await Promise.all([same.close(), other.close()]);
      }
    });

    it('refuses to run without a real pepper', async () => {
      const vault = new SqlitePaymentVault(join(dir, 'x.sqlite'));
      expect(() => new SimulatedPaymentGateway(vault, { pepper: Buffer.alloc(0) })).toThrow(/pepper/);
      return vault.close();
    });
  });

  describe('charge', () => {
    it('charges once when its write thread stops before answering, whether or not the charge was committed', async () => {
      const { token } = await gateway.tokenize(card('4242424242424242'));
      const vault = (gateway as unknown as { vault: SqlitePaymentVault }).vault;
      const writer = (vault as unknown as { writer: { run: (...args: unknown[]) => Promise<unknown> } }).writer;
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

    it.each([0, -5, 12.5, Number.NaN])('rejects an amount of %p cents', async (amountCents) => {
      await expect(gateway.charge({ ...charge('tok_x', 'k1'), amountCents })).rejects.toThrow(RangeError);
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

simulatedProcessorContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vault-'));
  return {
    open: () => new SqlitePaymentVault(join(dir, 'vault.sqlite')),
    concurrentProcesses: false,
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
