import {
  AlreadyCharging,
  CannotFulfil,
  Declined,
  EventStore,
  IdempotentRun,
  loadAggregate,
  LogPosition,
  orderedTimeText,
  PaymentFailed,
  PaymentGateway,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { Purchase, purchaseDecider } from '../domain/purchase/purchase.decider';
import { purchaseStream } from '../domain/purchase/purchase.events';
import { RecoverInterruptedPayments } from '../reactions/recover-interrupted-payments';
import { refundKey } from './refund-unfulfilled';

/** The id a purchase is to take, or the purchase a keyed request made before (its outcome to answer again). */
export type KeyedPurchase = { resumed: false; purchaseId: string } | { resumed: true; purchaseId: string; position: LogPosition | null };

/**
 * The purchases of requests sent with an `Idempotency-Key`. Such a purchase's id is derived from
 * the key's run (when it was first claimed, and its id), so that the run again of a request whose
 * process died before answering finds the purchase the first run made, and answers its outcome,
 * settling it first if it is still open, instead of buying again. A new run (a new key, or a key
 * whose earlier answer was not kept) has an id of its own: nothing to look for.
 */
@Injectable()
export class KeyedPurchases {
  constructor(
    private readonly store: EventStore,
    private readonly gateway: PaymentGateway,
    private readonly recovery: RecoverInterruptedPayments,
  ) {}

  /** A card purchase's id, or the outcome of the one a resumed run made. */
  async card(run: IdempotentRun | null, newId: () => string): Promise<KeyedPurchase> {
    if (run === null) return { resumed: false, purchaseId: newId() };
    const purchaseId = keyedPurchaseId(run);
    if (!run.resumed) return { resumed: false, purchaseId };
    let purchase = await this.purchase(purchaseId);
    if (purchase.status === 'none') return { resumed: false, purchaseId };
    if (purchase.status === 'reserved') {
      await this.recovery.settleNow(purchaseId);
      purchase = await this.purchase(purchaseId);
      if (purchase.status === 'reserved') throw new AlreadyCharging(`purchase ${purchaseId} is still being settled; ask again shortly`);
    }
    if (purchase.status === 'fulfilled') return { resumed: true, purchaseId, position: await this.store.head() };
    if (purchase.status === 'declined') throw new Declined('the card was declined');
    const charge = await this.gateway.chargeOutcome(purchaseId);
    if (charge?.status === 'approved' && (await this.gateway.refundOutcome(refundKey(purchaseId)))?.status === 'refunded')
      throw new CannotFulfil('the units sold out while the card was charged; the charge was refunded');
    throw new PaymentFailed(
      charge === null
        ? 'the purchase stopped before the card was charged; nothing was charged: send it again with a new Idempotency-Key'
        : 'the payment processor failed; nothing was charged',
    );
  }

  /** A reservation's id, or the one a resumed run made (answered as it is now). */
  async reservation(run: IdempotentRun | null, newId: () => string): Promise<KeyedPurchase> {
    if (run === null) return { resumed: false, purchaseId: newId() };
    const purchaseId = keyedPurchaseId(run);
    if (!run.resumed || (await this.purchase(purchaseId)).status === 'none') return { resumed: false, purchaseId };
    return { resumed: true, purchaseId, position: await this.store.head() };
  }

  private async purchase(purchaseId: string): Promise<Purchase> {
    return (await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider)).state;
  }
}

/**
 * The id of a keyed run's purchase, in a short id's form (19 characters, the first 7 the time, so
 * that it sorts with the others and keeps the log's and views' indexes growing at one end): the
 * run's start, then its random id (72 bits, as a short id's).
 */
export function keyedPurchaseId({ startedAt, runId }: IdempotentRun): string {
  return `${orderedTimeText(startedAt)}${runId}`;
}
