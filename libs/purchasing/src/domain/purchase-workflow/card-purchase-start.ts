import { Declined, PaymentFailed, PaymentOutcomeUnknown } from '@deals/kernel';
import { CHARGE_LOCK_MS } from '../charge-lock/charge-lock';
import { buyerKey, holdExpiry } from '../inventory/inventory.events';
import { command, report, undoStart } from './purchase-workflow.common';
import type {
  PurchaseWorkflowCommand,
  PurchaseWorkflowInput,
  PurchaseWorkflowMessage,
  PurchaseWorkflowState,
  SaleRecord,
  Step,
  StoredCardPurchaseStarted,
} from './purchase-workflow.types';
import { finish } from './sale';

/**
 * A stored-card purchase's start, the purchase workflow's part before its sale: the user's charge
 * lock, the purchase recorded, its units held and the `Idempotency-Key`'s entry, written as one
 * unit (all or none; its first refusal is the answer, `trouble.ts`). Then the card is charged
 * (idempotent by purchase id); approved: the sale and the lock's end are written in one unit
 * (`sale.ts`); declined or failed: the start is undone in one unit (the lock ended, the hold
 * released, the non-payment recorded); no answer: the lock is kept and the settling armed at its
 * end (`card-purchase-settling.ts`).
 */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

type StartInput = Extract<
  PurchaseWorkflowInput,
  {
    type:
      | 'StoredCardPurchaseStarted'
      | 'PurchaseStartWritten'
      | 'ChargeApproved'
      | 'ChargeDeclined'
      | 'ChargeFailed'
      | 'ChargeUnanswered'
      | 'RecoveryArmed';
  }
>;
type StartMessage = Exclude<StartInput, { type: 'RecoveryArmed' }> | Extract<PurchaseWorkflowMessage, { type: 'ArmRecovery' }>;

const CHARGING: readonly Step[] = ['Charge'];

export function decideCardPurchaseStart(input: StartInput, state: State, now: Date): Command[] {
  switch (input.type) {
    case 'StoredCardPurchaseStarted':
      return [startWrite(input.data, state, now)];
    case 'PurchaseStartWritten':
      return afterStart(state);
    case 'ChargeApproved':
    case 'ChargeDeclined':
    case 'ChargeFailed':
    case 'ChargeUnanswered':
      return afterCharge(state, now);
    case 'RecoveryArmed': {
      const why = recoveryReason(state);
      return [
        report(
          `purchase ${state.order.purchaseId}: ${why}; ${input.data.armed ? `settled at ${state.settleAt}` : 'settled at the next start'}`,
        ),
      ];
    }
  }
}

export function evolveCardPurchaseStart(state: State, message: StartMessage): State {
  switch (message.type) {
    case 'StoredCardPurchaseStarted':
      return started(state, message.data);
    case 'PurchaseStartWritten':
      return { ...state, start: { awaiting: CHARGING } };
    case 'ChargeApproved':
      return approved(startAnswered(state, 'Charge'), message.data.chargeId);
    case 'ChargeDeclined':
      return {
        ...startAnswered(state, 'Charge'),
        charge: { status: 'declined', reason: message.data.reason },
        // eslint-disable-next-line no-restricted-syntax -- the processor's reason, and a constant of ours
        answer: { outcome: 'refused', error: new Declined(`the card was declined: ${message.data.reason}`) },
      };
    case 'ChargeFailed':
      return {
        ...startAnswered(state, 'Charge'),
        charge: { status: 'error', reason: message.data.reason },
        answer: { outcome: 'refused', error: new PaymentFailed('the payment processor failed; nothing was charged') },
      };
    case 'ChargeUnanswered':
      return unanswered(state, message.data.reason);
    case 'ArmRecovery':
      return { ...state, settleAt: message.data.at };
  }
}

/** Why a card purchase's run left it open to its recovery job, for the log. */
function recoveryReason(state: State): string {
  if (state.charge?.status === 'unanswered') return `the processor did not answer its charge (${state.charge.reason})`;
  if (state.sale.unitsGone && !state.refunded) return 'its units were gone after its charge and the refund failed';
  const { answer } = state;
  if (state.sale.unitsGone || state.charge?.status !== 'approved')
    return `its start could not be undone (${answer && 'error' in answer ? answer.error.message : 'a write failed'})`;
  return `its card was charged and its sale could not be written (${state.sale.failure?.message ?? 'a write failed'})`;
}

/** The start's writes, asked for as one unit: the lock's refusal (`already_charging`) is told first. */
function startWrite(data: StoredCardPurchaseStarted['data'], state: State, now: Date): Command {
  const { purchaseId, partnerId, userId, creditCardId, sessionId, deal, quantity, shipping, gift, keyed } = data;
  return command('StartPurchase', {
    lock: { userId, purchaseId },
    reserve: {
      purchaseId,
      partnerId,
      deal,
      quantity,
      holdId: purchaseId,
      reservedAt: now.toISOString(),
      holdExpiresAt: new Date(holdExpiry(now.getTime())).toISOString(),
      payment: { userId, creditCardId, sessionId },
      ...(shipping ? { shipping } : {}),
      ...(gift ? { gift } : {}),
    },
    hold: { dealId: deal.dealId, holdId: purchaseId, quantity, ...state.order.buyer },
    keyed,
  });
}

function started(state: State, d: StoredCardPurchaseStarted['data']): State {
  const { purchaseId, partnerId, userId } = d;
  return {
    ...state,
    order: {
      path: 'stored_card',
      purchaseId,
      partnerId,
      userId,
      ...(d.gift ? { holder: d.gift.userId } : {}),
      dealId: d.deal.dealId,
      quantity: d.quantity,
      deal: d.deal,
      buyer: { buyer: buyerKey(partnerId, userId), maxPerBuyer: d.maxPerUser },
      cardToken: d.cardToken,
      amountCents: d.deal.unitPrice * d.quantity,
      record: {
        kind: 'payment',
        data: { purchaseId, partnerId, userId, creditCardId: d.creditCardId, chargeId: '', sessionId: d.sessionId },
      },
    },
    start: { ...state.start, awaiting: ['StartPurchase'] },
  };
}

function unanswered(state: State, reason: string): State {
  return {
    ...startAnswered(state, 'Charge'),
    charge: { status: 'unanswered', reason },
    answer: {
      outcome: 'refused',
      error: new PaymentOutcomeUnknown(
        // eslint-disable-next-line no-restricted-syntax -- the processor's reason, and a constant of ours
        `the payment processor did not answer; the purchase is settled from its record within ${CHARGE_LOCK_MS / 60_000} minutes: fulfilled if the card was charged, released if not`,
        state.order.purchaseId,
      ),
    },
  };
}

/** Once the start is written: the charge. */
function afterStart(state: State): Command[] {
  // The coupons' images are drawn on their thread while the card is charged, not after the sale.
  return [
    command('DrawCouponImages', { purchaseId: state.order.purchaseId, quantity: state.order.quantity }),
    command('Charge', {
      purchaseId: state.order.purchaseId,
      cardToken: state.order.cardToken,
      amountCents: state.order.amountCents,
      description: `deal ${state.order.dealId} x${state.order.quantity}`,
    }),
  ];
}

/** Once the charge answered: sell, give the units back, or wait for the settling. */
function afterCharge(state: State, now: Date): Command[] {
  if (state.start.awaiting.length || !state.charge) return [];
  const charge = state.charge;
  // The lock's end is written with the sale, in its unit.
  if (charge.status === 'approved') return [finish(state)];
  // Kept locked to its settling: a retry meanwhile answers 409 already_charging instead of perhaps charging twice.
  if (charge.status === 'unanswered')
    return [command('ArmRecovery', { purchaseId: state.order.purchaseId, at: new Date(now.getTime() + CHARGE_LOCK_MS).toISOString() })];
  return [undoStart(state)];
}

/** One awaited step of the start answered. */
function startAnswered(state: State, step: Step): State {
  if (!state.start.awaiting.includes(step)) return state;
  return { ...state, start: { ...state.start, awaiting: state.start.awaiting.filter((awaited) => awaited !== step) } };
}

export function approved(state: State, chargeId: string): State {
  const record = state.order.record as Extract<SaleRecord, { kind: 'payment' }>;
  return {
    ...state,
    charge: { status: 'approved', chargeId },
    order: { ...state.order, record: { ...record, data: { ...record.data, chargeId } } },
  };
}
