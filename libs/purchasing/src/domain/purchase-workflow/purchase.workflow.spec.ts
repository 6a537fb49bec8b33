import {
  AlreadyCharging,
  CannotFulfil,
  Declined,
  LogPosition,
  NotFound,
  PaymentFailed,
  PaymentOutcomeUnknown,
  ValidationFailed,
} from '@deals/kernel';
import { workflowSpec } from '@deals/testing';
import { HoldLapsed } from '../inventory/inventory.decider';
import { DealSnapshot } from '../purchase/purchase.events';
import {
  PurchaseWorkflowCommand,
  PurchaseWorkflowInput,
  PurchaseWorkflowState,
  purchaseWorkflow,
  SALE_ATTEMPTS,
  SOLD_OUT_DURING_CHARGE,
} from './purchase.workflow';
import { SALE_REFUSED } from './trouble';

type Input = PurchaseWorkflowInput;
const now = new Date('2026-06-15T12:00:00.000Z');
const given = workflowSpec(purchaseWorkflow, now);
const none = {} as Record<string, never>;
const at = (position: number): LogPosition => String(position).padStart(8, '0');

const deal: DealSnapshot = {
  dealId: 'd1',
  title: 'Dinner',
  type: 'voucher',
  imageUrl: null,
  unitPrice: 1500,
  expiresAt: null,
  expirationDays: 30,
  fulfillmentMethod: 'digital',
};
const started: Input = {
  type: 'StoredCardPurchaseStarted',
  data: {
    purchaseId: 'p1',
    partnerId: 'P',
    userId: 'u1',
    creditCardId: 'c1',
    cardToken: 'tok',
    sessionId: null,
    deal,
    quantity: 2,
    maxPerUser: 4,
    shipping: null,
    keyed: null,
  },
};
const written: Input = { type: 'PurchaseStartWritten', data: none };
const approved: Input = { type: 'ChargeApproved', data: { chargeId: 'ch1' } };
const lapsed: Input = { type: 'HoldLapsed', data: { error: new HoldLapsed() } };
const refused = (step: PurchaseWorkflowCommand['type'], error: Error): Input => ({ type: 'StepRefused', data: { step, error } });
const failed = (step: PurchaseWorkflowCommand['type'], error = new Error('disk I/O error')): Input => ({
  type: 'StepFailed',
  data: { step, error },
});
const gone = new CannotFulfil('only 1 unit left');
const lock = { userId: 'u1', purchaseId: 'p1' };

const answerOf = (state: PurchaseWorkflowState) => state.answer;

describe('purchase workflow: a stored-card purchase', () => {
  it('takes the charge lock, records the purchase and holds its units in one write', () => {
    given()
      .when(started)
      .then([
        {
          type: 'StartPurchase',
          data: {
            lock,
            reserve: {
              purchaseId: 'p1',
              partnerId: 'P',
              deal,
              quantity: 2,
              holdId: 'p1',
              reservedAt: '2026-06-15T12:00:00.000Z',
              holdExpiresAt: '2026-06-15T12:05:00.000Z',
              payment: { userId: 'u1', creditCardId: 'c1', sessionId: null },
            },
            hold: { dealId: 'd1', holdId: 'p1', quantity: 2, buyer: 'P/u1', maxPerBuyer: 4 },
            keyed: null,
          },
        },
      ]);
  });

  it("enters a keyed purchase among its key's purchases in the same write", () => {
    const keyed = { ...started, data: { ...started.data, keyed: { keyId: 'k1', attempt: 0 } } } as Input;
    const [write] = given().when(keyed).thenAsks('StartPurchase').commands;
    expect(write.data).toMatchObject({ keyed: { keyId: 'k1', attempt: 0 } });
  });

  it('charges the card once the start is written, drawing the coupons beside it', () => {
    given(started)
      .when(written)
      .then([
        { type: 'DrawCouponImages', data: { purchaseId: 'p1', quantity: 2 } },
        { type: 'Charge', data: { purchaseId: 'p1', cardToken: 'tok', amountCents: 3000, description: 'deal d1 x2' } },
      ]);
  });

  it('answers the refusal of its start, which wrote nothing, with nothing to undo', () => {
    const busy = new AlreadyCharging('a charge is running');
    const state = given(started).when(refused('StartPurchase', busy)).then([]);
    expect(answerOf(state)).toEqual({ outcome: 'refused', error: busy });
    const down = new Error('connection refused');
    const failedStart = given(started).when(failed('StartPurchase', down)).then([]);
    expect(answerOf(failedStart)).toEqual({ outcome: 'failed', error: down });
  });

  it('writes the sale and the lock’s end in one unit once the charge is approved', () => {
    given(started, written)
      .when(approved)
      .then([
        {
          type: 'FinishSale',
          data: {
            units: { purchaseId: 'p1', dealId: 'd1', holdId: 'p1', quantity: 2, buyer: 'P/u1', maxPerBuyer: 4 },
            record: {
              kind: 'payment',
              data: { purchaseId: 'p1', partnerId: 'P', userId: 'u1', creditCardId: 'c1', chargeId: 'ch1', sessionId: null },
              holdId: 'p1',
            },
            issue: { purchaseId: 'p1', partnerId: 'P', deal, couponIds: ['p1-1', 'p1-2'], userId: 'u1' },
            endCharge: lock,
          },
        },
      ]);
  });

  it('answers sold at the sale’s write once it is written', () => {
    const state = given(started, written, approved)
      .when({ type: 'SaleWritten', data: { position: at(9) } })
      .then([]);
    expect(answerOf(state)).toEqual({ outcome: 'sold', purchaseId: 'p1', position: at(9) });
  });

  it('writes the sale on fresh units when its hold lapsed, held and sold in one unit with the lock’s end, without answering yet', () => {
    const state = given(started, written, approved)
      .when(lapsed)
      .then([
        {
          type: 'FinishSale',
          data: {
            units: { purchaseId: 'p1', dealId: 'd1', holdId: 'p1-r', quantity: 2, buyer: 'P/u1', maxPerBuyer: 4, fresh: true },
            record: {
              kind: 'payment',
              data: { purchaseId: 'p1', partnerId: 'P', userId: 'u1', creditCardId: 'c1', chargeId: 'ch1', sessionId: null },
              holdId: 'p1-r',
            },
            issue: { purchaseId: 'p1', partnerId: 'P', deal, couponIds: ['p1-1', 'p1-2'], userId: 'u1' },
            endCharge: lock,
          },
        },
      ]);
    expect(answerOf(state)).toBeNull();
    const sold = given(started, written, approved, lapsed)
      .when({ type: 'SaleWritten', data: { position: at(9) } })
      .then([]);
    expect(answerOf(sold)).toEqual({ outcome: 'sold', purchaseId: 'p1', position: at(9) });
  });

  it('refunds when the fresh units are gone too, or their hold was released since (an earlier try took it)', () => {
    given(started, written, approved, lapsed)
      .when({ type: 'UnitsGone', data: { error: gone } })
      .then([{ type: 'Refund', data: { purchaseId: 'p1', chargeId: 'ch1', amountCents: 3000 } }]);
    const again = given(started, written, approved, lapsed)
      .when(lapsed)
      .then([{ type: 'Refund', data: { purchaseId: 'p1', chargeId: 'ch1', amountCents: 3000 } }]);
    expect(again.sale.unitsGone).toBeInstanceOf(HoldLapsed);
  });

  it('tries the sale again from what was written when its write fails, every try’s unit with the lock’s end', () => {
    const state = given(started, written, approved)
      .when(failed('FinishSale'))
      .then([{ type: 'ReadPurchase', data: { purchaseId: 'p1' } }]);
    expect(answerOf(state)).toBeNull();
    const read: Input = { type: 'PurchaseRead', data: { deal, quantity: 2, holdId: 'p1', sold: null } };
    const retry = given(started, written, approved, failed('FinishSale')).when(read).thenAsks('DrawCouponImages', 'FinishSale');
    expect(retry.commands[1].data).toMatchObject({ units: { holdId: 'p1' }, endCharge: lock });
  });

  it('writes the same unit again when a retry finds the sale recorded (nothing where all is written), with what the record names, and answers sold', () => {
    const read: Input = {
      type: 'PurchaseRead',
      data: { deal, quantity: 2, holdId: 'p1', sold: { holdId: 'p1-r', couponIds: ['p1-1', 'p1-2'], userId: 'u1' } },
    };
    const history = [started, written, approved, failed('FinishSale')];
    const [, finish] = given(...history)
      .when(read)
      .thenAsks('DrawCouponImages', 'FinishSale').commands;
    expect(finish.data).toMatchObject({
      units: { holdId: 'p1-r' },
      record: { kind: 'payment', holdId: 'p1-r' },
      issue: { couponIds: ['p1-1', 'p1-2'], userId: 'u1' },
      endCharge: lock,
      recorded: true,
    });
    expect(finish.data).not.toHaveProperty('units.fresh');
    const state = given(...history, read)
      .when({ type: 'SaleWritten', data: { position: at(4) } })
      .then([]);
    expect(answerOf(state)).toEqual({ outcome: 'sold', purchaseId: 'p1', position: at(4) });
  });

  it('undoes its start in one unit (lock, units, non-payment) when the card is declined, and answers declined', () => {
    const state = given(started, written)
      .when({ type: 'ChargeDeclined', data: { reason: 'insufficient funds' } })
      .then([
        {
          type: 'UndoStart',
          data: {
            lock,
            hold: { dealId: 'd1', holdId: 'p1' },
            nonPayment: { purchaseId: 'p1', partnerId: 'P', outcome: 'declined', reason: 'insufficient funds' },
          },
        },
      ]);
    expect(state.answer).toEqual({ outcome: 'refused', error: new Declined('the card was declined: insufficient funds') });
  });

  it('undoes its start when the processor fails, and answers that nothing was charged', () => {
    const { state, commands } = given(started, written)
      .when({ type: 'ChargeFailed', data: { reason: 'processor down' } })
      .thenAsks('UndoStart');
    expect(commands[0].data).toMatchObject({
      nonPayment: { purchaseId: 'p1', partnerId: 'P', outcome: 'error', reason: 'processor down' },
    });
    expect(state.answer).toEqual({ outcome: 'refused', error: new PaymentFailed('the payment processor failed; nothing was charged') });
  });

  it('answers the failure when giving the units back after a declined charge fails, and arms its settling', () => {
    const error = new Error('disk full');
    const declined: Input = { type: 'ChargeDeclined', data: { reason: 'x' } };
    const state = given(started, written, declined)
      .when(failed('UndoStart', error))
      .then([{ type: 'ArmRecovery', data: { purchaseId: 'p1', at: '2026-06-15T12:00:10.000Z' } }]);
    expect(state.answer).toEqual({ outcome: 'failed', error });
    given(started, written, declined, failed('UndoStart', error))
      .when({ type: 'RecoveryArmed', data: { armed: true } })
      .then([
        {
          type: 'Report',
          data: {
            level: 'error',
            message: 'purchase p1: its start could not be undone (disk full); settled at 2026-06-15T12:00:10.000Z',
          },
        },
      ]);
  });

  it('keeps the lock and arms the settling at its end when the processor does not answer', () => {
    const { state } = given(started, written)
      .when({ type: 'ChargeUnanswered', data: { reason: 'socket hang up' } })
      .thenAsks('ArmRecovery');
    expect(state.settleAt).toBe('2026-06-15T12:02:00.000Z');
    expect(state.answer).toMatchObject({ outcome: 'refused', error: expect.any(PaymentOutcomeUnknown) });
    const report = given(started, written, { type: 'ChargeUnanswered', data: { reason: 'socket hang up' } }).when({
      type: 'RecoveryArmed',
      data: { armed: true },
    });
    report.then([
      {
        type: 'Report',
        data: {
          level: 'error',
          message: 'purchase p1: the processor did not answer its charge (socket hang up); settled at 2026-06-15T12:02:00.000Z',
        },
      },
    ]);
  });

  it('refunds a charge whose units are gone, undoes its start, then answers that they are gone', () => {
    const charged = [started, written, approved];
    given(...charged)
      .when({ type: 'UnitsGone', data: { error: gone } })
      .then([{ type: 'Refund', data: { purchaseId: 'p1', chargeId: 'ch1', amountCents: 3000 } }]);
    given(...charged, { type: 'UnitsGone', data: { error: gone } })
      .when({ type: 'ChargeRefunded', data: none })
      .then([
        {
          type: 'UndoStart',
          data: {
            lock,
            hold: { dealId: 'd1', holdId: 'p1' },
            nonPayment: { purchaseId: 'p1', partnerId: 'P', outcome: 'error', reason: SOLD_OUT_DURING_CHARGE },
          },
        },
      ]);
    const state = given(...charged, { type: 'UnitsGone', data: { error: gone } }, { type: 'ChargeRefunded', data: none })
      .when({ type: 'StartUndone', data: none })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'refused', error: gone });
    // The refund failed: the purchase stays open, charged; its recovery job asks again (not left to a process's start).
    const unrefunded = given(...charged, { type: 'UnitsGone', data: { error: gone } })
      .when({ type: 'RefundFailed', data: { reason: 'refused' } })
      .then([{ type: 'ArmRecovery', data: { purchaseId: 'p1', at: '2026-06-15T12:00:10.000Z' } }]);
    expect(unrefunded.answer).toMatchObject({ outcome: 'failed' });
    given(...charged, { type: 'UnitsGone', data: { error: gone } }, { type: 'RefundFailed', data: { reason: 'refused' } })
      .when({ type: 'RecoveryArmed', data: { armed: true } })
      .then([
        {
          type: 'Report',
          data: {
            level: 'error',
            message: 'purchase p1: its units were gone after its charge and the refund failed; settled at 2026-06-15T12:00:10.000Z',
          },
        },
      ]);
  });

  it('refunds a charge whose sale a decider refused (its purchase recorded not paid meanwhile), undoes its start, then answers it', () => {
    const notPaid = new ValidationFailed([{ type: 'invalid', resource: 'purchase', field: 'id', message: 'is failed and cannot be paid' }]);
    const charged = [started, written, approved, lapsed];
    const { state } = given(...charged)
      .when(refused('FinishSale', notPaid))
      .thenAsks('Refund');
    expect(state.answer).toBeNull();
    const answered = given(...charged, refused('FinishSale', notPaid), { type: 'ChargeRefunded', data: none })
      .when({ type: 'StartUndone', data: none })
      .then([]);
    expect(answered.answer).toEqual({ outcome: 'refused', error: new CannotFulfil(SALE_REFUSED) });
  });

  it('tries a sale whose write failed again from what was written, at once, then with waits doubling from 50 ms, then arms its recovery', () => {
    const retried = [started, written, approved, failed('FinishSale')];
    // The second try writes the sale again in one write, from what the log holds.
    given(...retried)
      .when({ type: 'PurchaseRead', data: { deal, quantity: 2, holdId: 'p1', sold: null } })
      .thenAsks('DrawCouponImages', 'FinishSale');
    const soldAgain = given(...retried, { type: 'PurchaseRead', data: { deal, quantity: 2, holdId: 'p1', sold: null } })
      .when({ type: 'SaleWritten', data: { position: at(5) } })
      .then([]);
    expect(soldAgain.answer).toEqual({ outcome: 'sold', purchaseId: 'p1', position: at(5) });
    // Each later try waits first: 50, 100, 200, … ms.
    const waited: Input = { type: 'Waited', data: none };
    let history: Input[] = retried;
    for (let attempt = 2; attempt <= SALE_ATTEMPTS; attempt++) {
      given(...history)
        .when(failed('ReadPurchase'))
        .then([{ type: 'Wait', data: { ms: 50 * 2 ** (attempt - 2) } }]);
      given(...history, failed('ReadPurchase'))
        .when(waited)
        .thenAsks('ReadPurchase');
      history = [...history, failed('ReadPurchase'), waited];
    }
    // The last try fails: the answer is that failure, and the recovery job sells it 10 s later.
    const last = given(...history)
      .when(failed('ReadPurchase', new Error('still failing')))
      .then([{ type: 'ArmRecovery', data: { purchaseId: 'p1', at: '2026-06-15T12:00:10.000Z' } }]);
    expect(last.answer).toEqual({ outcome: 'failed', error: new Error('still failing') });
    given(...history, failed('ReadPurchase', new Error('still failing')))
      .when({ type: 'RecoveryArmed', data: { armed: true } })
      .then([
        {
          type: 'Report',
          data: {
            level: 'error',
            message:
              'purchase p1: its card was charged and its sale could not be written (still failing); settled at 2026-06-15T12:00:10.000Z',
          },
        },
      ]);
  });

  it('starts no try of a charged sale later than 6.5 s after its first failure (each try may take a statement bound)', () => {
    const charged = [started, written, approved];
    const failedAt = (step: PurchaseWorkflowCommand['type'], ms: number): Input => ({
      type: 'StepFailed',
      data: { step, error: new Error('Query read timeout'), at: now.getTime() + ms },
    });
    const first = [...charged, failedAt('FinishSale', 0)];
    // 5 s later the second try fails: the next (after 50 ms) still starts within the window.
    given(...first)
      .when(failedAt('ReadPurchase', 5_000))
      .then([{ type: 'Wait', data: { ms: 50 } }]);
    // 6.5 s after the first failure: no further try; the failure is answered and the recovery armed.
    const last = given(...first)
      .when(failedAt('ReadPurchase', 6_500))
      .thenAsks('ArmRecovery');
    expect(last.state.answer).toEqual({ outcome: 'failed', error: new Error('Query read timeout') });
  });
});

describe('purchase workflow: the claim of a reservation, a reseller’s sale', () => {
  const claim: Input = { type: 'ReservationClaimStarted', data: { purchaseId: 'p2', partnerId: 'P', userId: 'u2', maxPerUser: 1 } };
  const read = (sold: { holdId: string; couponIds: string[]; userId: string | null } | null = null): Input => ({
    type: 'PurchaseRead',
    data: { deal, quantity: 1, holdId: 'p2', sold },
  });

  it('reads the purchase, then sells its held units to the user (counted against the limit), records the claim and issues its coupons in one write', () => {
    given()
      .when(claim)
      .then([{ type: 'ReadPurchase', data: { purchaseId: 'p2' } }]);
    given(claim)
      .when(read())
      .then([
        { type: 'DrawCouponImages', data: { purchaseId: 'p2', quantity: 1 } },
        {
          type: 'FinishSale',
          data: {
            units: { purchaseId: 'p2', dealId: 'd1', holdId: 'p2', quantity: 1, buyer: 'P/u2', maxPerBuyer: 1 },
            record: { kind: 'claim', data: { purchaseId: 'p2', partnerId: 'P', userId: 'u2' }, holdId: 'p2' },
            issue: { purchaseId: 'p2', partnerId: 'P', deal, couponIds: ['p2-1'], userId: 'u2' },
            endCharge: null,
          },
        },
      ]);
    const state = given(claim, read())
      .when({ type: 'SaleWritten', data: { position: at(4) } })
      .then([]);
    expect(answerOf(state)).toEqual({ outcome: 'sold', purchaseId: 'p2', position: at(4) });
  });

  it('claims on fresh units in one write when the hold lapsed or was released: held and sold for the user (counted by the hold), recorded, coupons issued', () => {
    given(claim, read())
      .when({ type: 'HoldLapsed', data: { error: new HoldLapsed() } })
      .then([
        {
          type: 'FinishSale',
          data: {
            units: { purchaseId: 'p2', dealId: 'd1', holdId: 'p2-r', quantity: 1, buyer: 'P/u2', maxPerBuyer: 1, fresh: true },
            record: { kind: 'claim', data: { purchaseId: 'p2', partnerId: 'P', userId: 'u2' }, holdId: 'p2-r' },
            issue: { purchaseId: 'p2', partnerId: 'P', deal, couponIds: ['p2-1'], userId: 'u2' },
            endCharge: null,
          },
        },
      ]);
  });

  it('writes the same unit again for a claim already recorded (its retry), with what the record names: nothing where all is written', () => {
    const [, finish] = given(claim)
      .when(read({ holdId: 'p2', couponIds: ['p2-1'], userId: 'u2' }))
      .thenAsks('DrawCouponImages', 'FinishSale').commands;
    expect(finish.data).toMatchObject({ units: { holdId: 'p2', buyer: 'P/u2' }, issue: { couponIds: ['p2-1'] }, recorded: true });
  });

  it('answers the refusal when the units are gone, refunding nothing', () => {
    const state = given(claim, read())
      .when({ type: 'UnitsGone', data: { error: gone } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'refused', error: gone });
  });

  it('answers a sale refused but for its units as refused, taking no fresh units (nothing was written)', () => {
    const error = new NotFound('purchase p2 not found');
    const state = given(claim, read()).when(refused('FinishSale', error)).then([]);
    expect(state.answer).toEqual({ outcome: 'refused', error });
  });

  it('records a resale with its terms', () => {
    const resale: Input = {
      type: 'ResaleStarted',
      data: {
        purchaseId: 'p3',
        partnerId: 'P',
        transactionReference: 'T-1',
        terms: { amountCents: 900, transactionDate: '2026-06-01', buyer: { first_name: 'Ann' } },
      },
    };
    const [, finish] = given(resale)
      .when({ type: 'PurchaseRead', data: { deal, quantity: 1, holdId: 'p3', sold: null } })
      .thenAsks('DrawCouponImages', 'FinishSale').commands;
    expect(finish.data).toMatchObject({
      record: {
        kind: 'resale',
        data: {
          purchaseId: 'p3',
          partnerId: 'P',
          transactionReference: 'T-1',
          transactionDate: '2026-06-01',
          amountCents: 900,
          buyer: { first_name: 'Ann' },
        },
        holdId: 'p3',
      },
      units: { holdId: 'p3' },
      endCharge: null,
    });
  });
});

describe('purchase workflow: a card purchase settled from its stream after a crash or a silent processor', () => {
  const reserved = {
    type: 'PurchaseReserved' as const,
    data: {
      purchaseId: 'p1',
      partnerId: 'P',
      deal,
      quantity: 2,
      holdId: 'p1',
      reservedAt: now.toISOString(),
      holdExpiresAt: now.toISOString(),
      payment: { userId: 'u1', creditCardId: 'c1', sessionId: null },
    },
  };
  const settling: Input = { type: 'SettlingStarted', data: { purchaseId: 'p1', history: [reserved] } };
  const lookedUp = (charge: Extract<Input, { type: 'ChargeLookedUp' }>['data']['charge']): Input => ({
    type: 'ChargeLookedUp',
    data: { charge },
  });
  const undone: Input = { type: 'StartUndone', data: none };
  const undo = (nonPayment: { outcome: 'declined' | 'error'; reason: string }): PurchaseWorkflowCommand => ({
    type: 'UndoStart',
    data: { lock, hold: { dealId: 'd1', holdId: 'p1' }, nonPayment: { purchaseId: 'p1', partnerId: 'P', ...nonPayment } },
  });

  it('folds its stream: settled already (paid, or its non-payment recorded) or never a card purchase, it does nothing', () => {
    const paid = {
      type: 'PurchasePaid' as const,
      data: {
        purchaseId: 'p1',
        userId: 'u1',
        creditCardId: 'c1',
        amountCents: 3000,
        chargeId: 'ch1',
        holdId: 'p1',
        couponIds: ['p1-1', 'p1-2'],
        sessionId: null,
        paidAt: now.toISOString(),
      },
    };
    const notPaid = { type: 'PurchaseNotPaid' as const, data: { purchaseId: 'p1', outcome: 'declined' as const, reason: 'stolen card' } };
    const { payment: _, ...claimable } = reserved.data;
    for (const history of [[reserved, paid], [reserved, notPaid], [{ ...reserved, data: claimable }], []]) {
      const state = given()
        .when({ type: 'SettlingStarted', data: { purchaseId: 'p1', history } })
        .then([]);
      expect(state.answer).toEqual({ outcome: 'settled', purchaseId: 'p1', summary: 'nothing open' });
    }
  });

  it('folds its stream: an open card purchase is the order it reserved (its buyer, card, session, deal and amount)', () => {
    const { state } = given().when(settling).thenAsks('LookUpCharge');
    expect(state.order).toMatchObject({
      path: 'settling',
      partnerId: 'P',
      userId: 'u1',
      dealId: 'd1',
      quantity: 2,
      amountCents: 3000,
      buyer: { buyer: 'P/u1' },
      record: { kind: 'payment', data: { creditCardId: 'c1', sessionId: null } },
    });
  });

  it('asks the processor what it recorded, never charging', () => {
    given()
      .when(settling)
      .then([{ type: 'LookUpCharge', data: { purchaseId: 'p1' } }]);
  });

  it('stopped before its charge: undoes its start in one unit (hold, non-payment, lock), and is settled', () => {
    given(settling)
      .when(lookedUp(null))
      .then([undo({ outcome: 'error', reason: 'interrupted before charging' })]);
    const state = given(settling, lookedUp(null)).when(undone).then([]);
    expect(state.answer).toEqual({ outcome: 'settled', purchaseId: 'p1', summary: 'never charged' });
  });

  it('declined before the crash: records it as declined', () => {
    given(settling)
      .when(lookedUp({ status: 'declined', reason: 'stolen card' }))
      .then([undo({ outcome: 'declined', reason: 'stolen card' })]);
  });

  it('charged, and refunded before the crash (its units were gone): closed, never sold', () => {
    given(settling)
      .when(lookedUp({ status: 'approved', chargeId: 'ch1' }))
      .thenAsks('LookUpRefund');
    given(settling, lookedUp({ status: 'approved', chargeId: 'ch1' }))
      .when({ type: 'RefundLookedUp', data: { refunded: true } })
      .then([undo({ outcome: 'error', reason: SOLD_OUT_DURING_CHARGE })]);
    const steps = [
      settling,
      lookedUp({ status: 'approved', chargeId: 'ch1' }),
      { type: 'RefundLookedUp', data: { refunded: true } } as Input,
    ];
    const state = given(...steps)
      .when(undone)
      .then([]);
    expect(state.answer).toEqual({ outcome: 'settled', purchaseId: 'p1', summary: 'refunded before the crash' });
  });

  const charged = [
    settling,
    lookedUp({ status: 'approved', chargeId: 'ch1' }),
    { type: 'RefundLookedUp', data: { refunded: false } } as Input,
  ];

  it('charged, stopped before the sale: sells for the buyer (the limit not applied again), records the payment, issues the coupons and ends the lock in one write', () => {
    given(settling, lookedUp({ status: 'approved', chargeId: 'ch1' }))
      .when({ type: 'RefundLookedUp', data: { refunded: false } })
      .then([{ type: 'ReadPurchase', data: { purchaseId: 'p1' } }]);
    const readNow: Input = { type: 'PurchaseRead', data: { deal, quantity: 2, holdId: 'p1', sold: null } };
    given(...charged)
      .when(readNow)
      .then([
        { type: 'DrawCouponImages', data: { purchaseId: 'p1', quantity: 2 } },
        {
          type: 'FinishSale',
          data: {
            units: { purchaseId: 'p1', dealId: 'd1', holdId: 'p1', quantity: 2, buyer: 'P/u1' },
            record: {
              kind: 'payment',
              data: { purchaseId: 'p1', partnerId: 'P', userId: 'u1', creditCardId: 'c1', chargeId: 'ch1', sessionId: null },
              holdId: 'p1',
            },
            issue: { purchaseId: 'p1', partnerId: 'P', deal, couponIds: ['p1-1', 'p1-2'], userId: 'u1' },
            endCharge: lock,
          },
        },
      ]);
    const state = given(...charged, readNow)
      .when({ type: 'SaleWritten', data: { position: at(6) } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'settled', purchaseId: 'p1', summary: 'approved; sold and coupons issued' });
  });

  it('charged and recorded, stopped before its unit was whole (a store appending stream by stream): writes it again with the lock’s end, and is settled', () => {
    const read: Input = {
      type: 'PurchaseRead',
      data: { deal, quantity: 2, holdId: 'p1', sold: { holdId: 'p1', couponIds: ['p1-1', 'p1-2'], userId: 'u1' } },
    };
    const [, finish] = given(...charged)
      .when(read)
      .thenAsks('DrawCouponImages', 'FinishSale').commands;
    expect(finish.data).toMatchObject({ units: { holdId: 'p1' }, endCharge: lock, recorded: true });
    const state = given(...charged, read)
      .when({ type: 'SaleWritten', data: { position: at(3) } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'settled', purchaseId: 'p1', summary: 'approved; sold and coupons issued' });
  });

  it('charged, its hold lapsed while it was down: sells fresh units for the buyer in one write with the lock’s end', () => {
    const read: Input = { type: 'PurchaseRead', data: { deal, quantity: 2, holdId: 'p1', sold: null } };
    const [finish] = given(...charged, read)
      .when(lapsed)
      .thenAsks('FinishSale').commands;
    expect(finish.data).toMatchObject({ units: { holdId: 'p1-r', buyer: 'P/u1', fresh: true }, endCharge: lock });
    expect(finish.data).not.toHaveProperty('units.maxPerBuyer');
  });

  it('charged, and the units sold out while it was down: refunds, then undoes its start in one unit', () => {
    const read: Input = { type: 'PurchaseRead', data: { deal, quantity: 2, holdId: 'p1', sold: null } };
    given(...charged, read)
      .when({ type: 'UnitsGone', data: { error: gone } })
      .thenAsks('Refund');
    const refunded = [
      ...charged,
      read,
      { type: 'UnitsGone', data: { error: gone } } as Input,
      { type: 'ChargeRefunded', data: none } as Input,
    ];
    const state = given(...refunded)
      .when(undone)
      .then([]);
    expect(state.answer).toEqual({ outcome: 'settled', purchaseId: 'p1', summary: 'approved, but sold out meanwhile: refunded' });
  });

  it('fails without ending the lock when a step fails (tried again later)', () => {
    const error = new Error('processor away');
    const state = given(settling).when(failed('LookUpCharge', error)).then([]);
    expect(state.answer).toEqual({ outcome: 'failed', error });
  });
});

describe('purchase workflow: a gift (bought for someone else)', () => {
  const gift = { userId: 'r1', name: 'Ann', message: 'Happy birthday', deliverAt: null };
  const giftStarted = { ...started, data: { ...started.data, gift } } as Input;

  it('records the gift with the purchase, taking the payer’s lock and counting the payer’s units', () => {
    const [write] = given().when(giftStarted).thenAsks('StartPurchase').commands;
    expect(write.data).toMatchObject({
      lock,
      reserve: { payment: { userId: 'u1', creditCardId: 'c1' }, gift },
      hold: { buyer: 'P/u1', maxPerBuyer: 4 },
    });
  });

  it('issues the coupons to its recipient in the sale’s unit; the payment and the lock’s end stay the payer’s', () => {
    const [finish] = given(giftStarted, written).when(approved).thenAsks('FinishSale').commands;
    expect(finish.data).toMatchObject({
      record: { kind: 'payment', data: { userId: 'u1', creditCardId: 'c1', chargeId: 'ch1' } },
      issue: { couponIds: ['p1-1', 'p1-2'], userId: 'r1' },
      endCharge: lock,
    });
  });

  it('settled from its stream after a crash: issues the coupons to its recipient', () => {
    const reserved = {
      type: 'PurchaseReserved' as const,
      data: {
        purchaseId: 'p1',
        partnerId: 'P',
        deal,
        quantity: 2,
        holdId: 'p1',
        reservedAt: now.toISOString(),
        holdExpiresAt: now.toISOString(),
        payment: { userId: 'u1', creditCardId: 'c1', sessionId: null },
        gift,
      },
    };
    const steps: Input[] = [
      { type: 'SettlingStarted', data: { purchaseId: 'p1', history: [reserved] } },
      { type: 'ChargeLookedUp', data: { charge: { status: 'approved', chargeId: 'ch1' } } },
      { type: 'RefundLookedUp', data: { refunded: false } },
    ];
    const [, finish] = given(...steps)
      .when({ type: 'PurchaseRead', data: { deal, quantity: 2, holdId: 'p1', sold: null } })
      .thenAsks('DrawCouponImages', 'FinishSale').commands;
    expect(finish.data).toMatchObject({ record: { data: { userId: 'u1' } }, issue: { userId: 'r1' }, endCharge: lock });
  });
});
