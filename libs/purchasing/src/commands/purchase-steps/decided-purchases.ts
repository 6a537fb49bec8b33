import { CommandCaller, inlineDocument, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { COUPON_DETAILS, CouponDetails, couponDetailsProjection } from '../../projections/coupon-details/coupon-details.projection';
import {
  PURCHASE_DETAILS,
  PurchaseDetails,
  purchaseDetailsProjection,
} from '../../projections/purchase-details/purchase-details.projection';

/** A purchase as its views will show it, as the units of work that made and sold it folded it. */
export interface DecidedPurchase {
  purchase: PurchaseDetails;
  /** In the purchase's order of coupon ids. */
  coupons: CouponDetails[];
}

const logger = new Logger('Purchase');

/**
 * Answers a purchase from its decision rather than from its views (the worker's fold a round trip
 * or two behind): the purchase's and its coupons' documents as the request's units of work folded
 * them (both views run inline: `InlineProjections`), written with the sale's events where the log can;
 * else written ahead of the views now, where other processes read them (the caller's next read of
 * the purchase may reach another replica). The views the answer did not write are left to the
 * caller's next reads (`RequestWrites.deferred`).
 */
@Injectable()
export class DecidedPurchases {
  constructor(private readonly views: ViewStore) {}

  /**
   * The purchase `purchaseId` as its units of work folded it, once shown to every reader; null when
   * it is not sold whole as folded here (coupons owed, a fold this process did not make) or its
   * documents could not be written: the answer then waits for the views as any other.
   */
  async shown(caller: CommandCaller, purchaseId: string): Promise<DecidedPurchase | null> {
    const writes = caller.writes;
    if (!writes) return null;
    const purchase = inlineDocument(writes, purchaseDetailsProjection, purchaseId);
    if (!purchase || purchase.doc.fulfillmentState !== 'fulfilled' || purchase.doc.couponsOwed > 0) return null;
    const coupons = purchase.doc.couponIds.map((id) => inlineDocument(writes, couponDetailsProjection, id));
    if (coupons.some((coupon) => coupon === null)) return null;
    const decided = { purchase: purchase.doc, coupons: coupons.map((coupon) => coupon!.doc) };
    if (!(writes.shown.has(PURCHASE_DETAILS) && writes.shown.has(COUPON_DETAILS))) {
      let ahead: boolean;
      try {
        // The coupons first: a reader who finds the purchase finds its coupons.
        ahead = await this.views.writeAhead([
          { collection: COUPON_DETAILS, documents: decided.coupons },
          { collection: PURCHASE_DETAILS, documents: [decided.purchase] },
        ]);
      } catch (error) {
        logger.warn(
          `purchase ${purchaseId}: its documents were not written ahead of the views (${(error as Error).message}); answered once the views show it`,
        );
        return null;
      }
      // A store other processes read must hold them now; an in-process store's readers wait for its fold.
      if (!ahead && !this.views.inProcess) return null;
      if (ahead) for (const collection of [PURCHASE_DETAILS, COUPON_DETAILS]) writes.shown.add(collection);
    }
    writes.deferred = true;
    return decided;
  }
}
