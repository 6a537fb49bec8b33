import { CommandCaller, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { COUPON_DETAILS, CouponDetails, couponDetailsProjection } from '../../projections/coupon-details/coupon-details.projection';
import {
  PURCHASE_DETAILS,
  PurchaseDetails,
  purchaseDetailsProjection,
} from '../../projections/purchase-details/purchase-details.projection';

/** A purchase as its views will show it, built from the events of the request that made and sold it. */
export interface DecidedPurchase {
  purchase: PurchaseDetails;
  /** In the purchase's order of coupon ids. */
  coupons: CouponDetails[];
}

const logger = new Logger('Purchase');

/**
 * Answers a purchase from its decision rather than from its views (the worker's fold a round trip
 * or two behind): the purchase's and its coupons' documents are folded from the request's own
 * events, written ahead of the views where other processes read them (the caller's next read of
 * the purchase may reach another replica), and the views the answer did not write are left to the
 * caller's next reads (`RequestWrites.deferred`).
 */
@Injectable()
export class DecidedPurchases {
  constructor(private readonly views: ViewStore) {}

  /** Before the purchase's commands: keep what they write. */
  keep(caller: CommandCaller): void {
    caller.writes?.keepEvents();
  }

  /**
   * The purchase `purchaseId` as this request wrote it, once shown to every reader; null when the
   * request did not make and sell it whole (a repeat of a keyed request, coupons owed) or its
   * documents could not be written ahead: the answer then waits for the views as any other.
   */
  async shown(caller: CommandCaller, purchaseId: string): Promise<DecidedPurchase | null> {
    const writes = caller.writes;
    if (!writes) return null;
    const purchase = writes.documentsWritten(purchaseDetailsProjection, [purchaseId]).get(purchaseId);
    if (!purchase || purchase.fulfillmentState !== 'fulfilled' || purchase.couponsOwed > 0) return null;
    const issued = writes.documentsWritten(couponDetailsProjection, purchase.couponIds);
    const coupons = purchase.couponIds.map((id) => issued.get(id));
    if (coupons.some((coupon) => coupon === undefined)) return null;
    let written: boolean;
    try {
      // The coupons first: a reader who finds the purchase finds its coupons.
      written = await this.views.writeAhead([
        { collection: COUPON_DETAILS, documents: coupons as CouponDetails[] },
        { collection: PURCHASE_DETAILS, documents: [purchase] },
      ]);
    } catch (error) {
      logger.warn(
        `purchase ${purchaseId}: its documents were not written ahead of the views (${(error as Error).message}); answered once the views show it`,
      );
      return null;
    }
    // A store other processes read must hold them now; an in-process store's readers wait for its fold.
    if (!written && !this.views.inProcess) return null;
    if (written) for (const collection of [PURCHASE_DETAILS, COUPON_DETAILS]) writes.shown.add(collection);
    writes.deferred = true;
    return { purchase, coupons: coupons as CouponDetails[] };
  }
}
