import {
  AlreadyCharging,
  CannotFulfil,
  Clock,
  fold,
  Declined,
  EventStore,
  IdempotentRun,
  LogPosition,
  orderedTimeText,
  PaymentFailed,
  PaymentGateway,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { CHARGE_LOCK_MS } from '../domain/charge-lock/charge-lock';
import { Purchase, purchaseDecider } from '../domain/purchase/purchase.decider';
import { PurchaseEvent, purchaseStream } from '../domain/purchase/purchase.events';
import { RecoverInterruptedPayments } from '../reactions/recover-interrupted-payments';
import { refundKey } from './refund-unfulfilled';

/** The id a purchase is to take, or the purchase a keyed request made before (its outcome to answer again). */
export type KeyedPurchase = { resumed: false; purchaseId: string } | { resumed: true; purchaseId: string; position: LogPosition | null };

/** How many purchases one run may start, each stopped before any charge (then the next is its own). */
const ATTEMPTS = 100;

/**
 * The purchases of requests sent with an `Idempotency-Key`. Such a purchase's id is derived from
 * the key's run (when it was first claimed, and its id), so that a run resumed (its process died
 * before answering, or its answer was not kept) finds the purchase an earlier try of the run made
 * and answers its outcome, settling it first if it is open and its charge lock is over, instead of
 * buying again. A purchase stopped before any charge (the user's other charge, a stop before the
 * charge) is no outcome: the run's next id buys. A new run has ids of its own: nothing to look for.
 */
@Injectable()
export class KeyedPurchases {
  constructor(
    private readonly store: EventStore,
    private readonly gateway: PaymentGateway,
    private readonly recovery: RecoverInterruptedPayments,
    private readonly clock: Clock,
  ) {}

  /** A card purchase's id, or the outcome of the one a resumed run made. */
  async card(run: IdempotentRun | null, newId: () => string): Promise<KeyedPurchase> {
    if (run === null) return { resumed: false, purchaseId: newId() };
    if (!run.resumed) return { resumed: false, purchaseId: keyedPurchaseId(run, 0) };
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const purchaseId = keyedPurchaseId(run, attempt);
      const found = await this.purchase(purchaseId);
      let purchase = found.purchase;
      if (purchase.status === 'none') return { resumed: false, purchaseId };
      if (purchase.status === 'reserved') {
        // Its charge may still be under way in another process until its lock ends; after, settled
        // from the processor's record as the recovery would.
        if (found.reservedAt + CHARGE_LOCK_MS > this.clock.now().getTime())
          throw new AlreadyCharging(`purchase ${purchaseId} is still being charged; ask again shortly`);
        await this.recovery.settleNow(purchaseId);
        purchase = (await this.purchase(purchaseId)).purchase;
        if (purchase.status === 'reserved') throw new AlreadyCharging(`purchase ${purchaseId} is still being settled; ask again shortly`);
      }
      if (purchase.status === 'fulfilled') return { resumed: true, purchaseId, position: await this.store.head() };
      if (purchase.status === 'declined') throw new Declined('the card was declined');
      const charge = await this.gateway.chargeOutcome(purchaseId);
      if (charge === null) continue; // stopped before its charge: nothing was taken
      if (charge.status === 'approved' && (await this.gateway.refundOutcome(refundKey(purchaseId)))?.status === 'refunded')
        throw new CannotFulfil('the units sold out while the card was charged; the charge was refunded');
      throw new PaymentFailed('the payment processor failed; nothing was charged');
    }
    throw new PaymentFailed(`this Idempotency-Key's run has started ${ATTEMPTS} purchases already; use a new key`);
  }

  /** A reservation's id, or the one a resumed run made (answered as it is now). */
  async reservation(run: IdempotentRun | null, newId: () => string): Promise<KeyedPurchase> {
    if (run === null) return { resumed: false, purchaseId: newId() };
    const purchaseId = keyedPurchaseId(run, 0);
    if (!run.resumed || (await this.purchase(purchaseId)).purchase.status === 'none') return { resumed: false, purchaseId };
    return { resumed: true, purchaseId, position: await this.store.head() };
  }

  /** The purchase's state, and when it was reserved (ms). */
  private async purchase(purchaseId: string): Promise<{ purchase: Purchase; reservedAt: number }> {
    const events = (await this.store.readStream(purchaseStream(purchaseId))) as unknown as PurchaseEvent[];
    const first = events[0];
    const reservedAt = first?.type === 'PurchaseReserved' ? Date.parse(first.data.reservedAt) : 0;
    return { purchase: fold(purchaseDecider, events), reservedAt };
  }
}

/**
 * The id of a keyed run's purchase, in a short id's form (19 characters, the first 7 the time, so
 * that it sorts with the others and keeps the log's and views' indexes growing at one end): the
 * run's start, then its random id (72 bits, as a short id's), or for a later try of the run a hash of both.
 */
export function keyedPurchaseId({ startedAt, runId }: IdempotentRun, attempt: number): string {
  const rest = attempt === 0 ? runId : createHash('sha256').update(`${runId}\0${attempt}`).digest('base64url').slice(0, 12);
  return `${orderedTimeText(startedAt)}${rest}`;
}
