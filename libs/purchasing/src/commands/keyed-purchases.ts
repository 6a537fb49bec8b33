import {
  AlreadyCharging,
  CannotFulfil,
  Declined,
  EventStore,
  loadAggregate,
  LogPosition,
  PaymentFailed,
  PaymentGateway,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { Purchase, purchaseDecider } from '../domain/purchase/purchase.decider';
import { purchaseStream } from '../domain/purchase/purchase.events';
import { RecoverInterruptedPayments } from '../reactions/recover-interrupted-payments';
import { refundKey } from './refund-unfulfilled';

/** A purchase a keyed request made before (its outcome to answer again), or the id its run is to take. */
export type KeyedPurchase = { resumed: false; purchaseId: string } | { resumed: true; purchaseId: string; position: LogPosition | null };

/** How many purchases one key may start, each refused before any charge (a retry after a 409 runs again). */
const ATTEMPTS = 100;

/**
 * The purchases of requests sent with an `Idempotency-Key`. Such a purchase's id is derived from
 * the key, so that a request run again (its process died before answering, or its answer was not
 * kept) finds the purchase the first run made and answers its outcome, settling it first if it is
 * still open, instead of buying again. A purchase refused before any charge (the user's other
 * charge, units gone) is no outcome to keep: the next attempt takes the key's next id.
 */
@Injectable()
export class KeyedPurchases {
  constructor(
    private readonly store: EventStore,
    private readonly gateway: PaymentGateway,
    private readonly recovery: RecoverInterruptedPayments,
  ) {}

  /** A new purchase's id: the key's first free one, unless a purchase of the key is to be answered again; a new random id without a key. */
  async card(keyId: string | null, newId: () => string): Promise<KeyedPurchase> {
    if (keyId === null) return { resumed: false, purchaseId: newId() };
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const purchaseId = keyedPurchaseId(keyId, attempt);
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
      if (charge === null) continue; // refused or stopped before charging: nothing was taken
      if (charge.status === 'approved' && (await this.gateway.refundOutcome(refundKey(purchaseId)))?.status === 'refunded')
        throw new CannotFulfil('the units sold out while the card was charged; the charge was refunded');
      throw new PaymentFailed('the payment processor failed; nothing was charged');
    }
    throw new PaymentFailed(`this Idempotency-Key has started ${ATTEMPTS} purchases already; use a new key`);
  }

  /** A reservation's id: the one its key made before (answered as it is now), else a new one. */
  async reservation(keyId: string | null, newId: () => string): Promise<KeyedPurchase> {
    if (keyId === null) return { resumed: false, purchaseId: newId() };
    const purchaseId = keyedPurchaseId(keyId, 0);
    if ((await this.purchase(purchaseId)).status === 'none') return { resumed: false, purchaseId };
    return { resumed: true, purchaseId, position: await this.store.head() };
  }

  private async purchase(purchaseId: string): Promise<Purchase> {
    return (await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider)).state;
  }
}

/** The id of a key's `attempt`-th purchase: 19 characters like a short id, starting with a letter. */
export function keyedPurchaseId(keyId: string, attempt: number): string {
  return `k${createHash('sha256').update(`${keyId}\0purchase\0${attempt}`).digest('base64url').slice(0, 18)}`;
}
