import type { PaymentVault } from '@deals/adapters/payment-gateway/simulated/payment-vault';
import { SimulatedPaymentGateway } from '@deals/adapters/payment-gateway/simulated/simulated-payment-gateway.adapter';
import type { CardDetails } from '@deals/kernel';

export interface VaultUnderTest {
  /** A vault as one process opens it: called again, the same store opened anew (a restart, another process). */
  open(): PaymentVault;
  /** Whether several processes use the store at once (else one after another). */
  concurrentProcesses: boolean;
  cleanup(): Promise<void>;
}

/** The fingerprint pepper, a card and a charge as the processor's tests give them. */
export const pepper = Buffer.alloc(32, 1);
export const card = (number: string, cvv = '123'): CardDetails => ({ number, cvv, month: 12, year: 2030, zip: '94107' });
export const charge = (token: string, idempotencyKey: string, amountCents = 1500) => ({
  token,
  amountCents,
  idempotencyKey,
  description: 'deal 42',
});

/** What the simulated processor promises on each of its vaults: its test cards' outcomes, each key charged or refunded once. */
export function simulatedProcessorContract(name: string, setup: () => Promise<VaultUnderTest>): void {
  describe(`simulated processor contract: ${name}`, () => {
    let subject: VaultUnderTest;
    let gateway: SimulatedPaymentGateway;
    const others: SimulatedPaymentGateway[] = [];
    const another = () => {
      const other = new SimulatedPaymentGateway(subject.open(), { pepper, slowMs: 150 });
      others.push(other);
      return other;
    };
    beforeEach(async () => {
      subject = await setup();
      gateway = new SimulatedPaymentGateway(subject.open(), { pepper, slowMs: 150 });
    });
    afterEach(async () => {
      for (const other of others.splice(0)) await other.close();
      await gateway.close();
      await subject.cleanup();
    });

    describe('charge', () => {
      it('approves 4242424242424242 and any other valid number', async () => {
        for (const number of ['4242424242424242', '5555555555554444']) {
          const { token } = await gateway.tokenize(card(number));
          expect(await gateway.charge(charge(token, `k-${number}`))).toEqual({
            status: 'approved',
            chargeId: expect.stringMatching(/^ch_/),
          });
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

      it('answers an unknown token with an error', async () => {
        expect(await gateway.charge(charge('tok_unknown', 'k1'))).toEqual({ status: 'error', reason: 'unknown card token' });
      });

      it('returns the first outcome for a repeated key, also after a restart', async () => {
        const { token } = await gateway.tokenize(card('4242424242424242'));
        const first = await gateway.charge(charge(token, 'purchase-1'));
        expect(await gateway.charge(charge(token, 'purchase-1'))).toEqual(first);
        expect(await gateway.chargeOutcome('purchase-1')).toEqual(first);
        await gateway.close();
        gateway = new SimulatedPaymentGateway(subject.open(), { pepper });
        expect(await gateway.charge(charge(token, 'purchase-1'))).toEqual(first);
        expect(await gateway.chargeOutcome('purchase-1')).toEqual(first);
        expect(await gateway.charge(charge(token, 'purchase-2'))).not.toEqual(first);
        expect(await gateway.chargeOutcome('purchase-3')).toBeNull();
      });

      it('returns the first decline for a repeated key', async () => {
        const { token } = await gateway.tokenize(card('4000000000000002'));
        const first = await gateway.charge(charge(token, 'k1'));
        expect(await gateway.charge(charge(token, 'k1'))).toEqual(first);
      });

      it('gives concurrent calls with one key one charge (from several processes where they share the vault)', async () => {
        const { token } = await gateway.tokenize(card('4242424242424242'));
        const gateways = subject.concurrentProcesses ? [gateway, another(), another()] : [gateway, gateway, gateway];
        for (let round = 0; round < 10; round++) {
          const outcomes = await Promise.all(gateways.map((g) => g.charge(charge(token, `k-${round}`))));
          expect(new Set(outcomes.map((o) => JSON.stringify(o))).size).toBe(1);
          expect(outcomes[0]).toMatchObject({ status: 'approved' });
        }
      });

      it('answers many charges asked at once, each as its card decides, and a key asked twice with one charge', async () => {
        const [approving, declining] = [await gateway.tokenize(card('4242424242424242')), await gateway.tokenize(card('4000000000000002'))];
        const tokenOf = (k: number) => (k % 5 === 0 ? declining.token : k % 7 === 0 ? 'tok_unknown' : approving.token);
        const keys = Array.from({ length: 60 }, (_, i) => i % 40);
        const outcomes = await Promise.all(keys.map((k) => gateway.charge(charge(tokenOf(k), `many-${k}`))));
        keys.forEach((k, i) => {
          const expected = k % 5 === 0 ? 'declined' : k % 7 === 0 ? 'error' : 'approved';
          expect(outcomes[i]).toMatchObject({ status: expected });
          expect(outcomes[i]).toEqual(outcomes[keys.indexOf(k)]);
        });
        const approved = outcomes.filter((o) => o.status === 'approved').map((o) => (o as { chargeId: string }).chargeId);
        expect(new Set(approved).size).toBe(new Set(keys.filter((k) => k % 5 !== 0 && k % 7 !== 0)).size);
        for (const k of new Set(keys)) expect(await gateway.chargeOutcome(`many-${k}`)).toEqual(outcomes[keys.indexOf(k)]);
      });

      it('refuses a key reused with another amount', async () => {
        const { token } = await gateway.tokenize(card('4242424242424242'));
        await gateway.charge(charge(token, 'k1', 1500));
        expect(await gateway.charge(charge(token, 'k1', 2500))).toEqual({
          status: 'error',
          reason: 'idempotency key reused with other parameters',
        });
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
        expect(await gateway.refundOutcome('r1')).toEqual(first);
        expect(await gateway.refund({ chargeId, amountCents: 1, idempotencyKey: 'r2' })).toMatchObject({ status: 'refused' });
        expect(await gateway.refundOutcome('r3')).toBeNull();
      });

      it('refunds no more than the charge when refunds of it come at once (from several processes where they share the vault)', async () => {
        const gateways = subject.concurrentProcesses ? [gateway, another(), another()] : [gateway, gateway, gateway];
        const outcomes = await Promise.all(
          [0, 1, 2, 3, 4, 5].map((i) => gateways[i % gateways.length].refund({ chargeId, amountCents: 500, idempotencyKey: `r${i}` })),
        );
        expect(outcomes.filter((o) => o.status === 'refunded')).toHaveLength(3);
        expect(outcomes.filter((o) => o.status === 'refused')).toHaveLength(3);
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
  });
}
