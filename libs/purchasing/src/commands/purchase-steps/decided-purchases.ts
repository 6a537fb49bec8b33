import { CommandCaller, InlineViews, PendingEvent, RecordedEvent, RequestWrites, ViewStore } from '@deals/kernel';
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
 * events and written where other processes read them (the caller's next read of the purchase may
 * reach another replica): with the sale's events in their transaction where the event store can
 * (`EventStore.writesViews`), else ahead of the views right after; the views the answer did not
 * write are left to the caller's next reads (`RequestWrites.deferred`).
 */
@Injectable()
export class DecidedPurchases {
  constructor(private readonly views: ViewStore) {}

  /** Before the purchase's commands: keep what they write, and write its documents with its sale. */
  keep(caller: CommandCaller, purchaseId: string): void {
    const writes = caller.writes;
    if (!writes) return;
    writes.keepEvents();
    writes.inlineViews = (pending) => {
      // Only the unit that changes the purchase (its sale): the lock's end after it carries none.
      const changesIt = pending.some(
        (event) =>
          purchaseDetailsProjection.handles.includes(event.type) &&
          purchaseDetailsProjection.documentIds(event as RecordedEvent).includes(purchaseId),
      );
      const decided = changesIt ? this.documents(writes, purchaseId, pending) : null;
      return decided && written(decided);
    };
  }

  /**
   * The purchase `purchaseId` as this request wrote it, once shown to every reader; null when the
   * request did not make and sell it whole (a repeat of a keyed request, coupons owed) or its
   * documents could not be written: the answer then waits for the views as any other.
   */
  async shown(caller: CommandCaller, purchaseId: string): Promise<DecidedPurchase | null> {
    const writes = caller.writes;
    if (!writes) return null;
    writes.inlineViews = null;
    const decided = this.documents(writes, purchaseId);
    if (!decided) return null;
    if (!(writes.shown.has(PURCHASE_DETAILS) && writes.shown.has(COUPON_DETAILS))) {
      let ahead: boolean;
      try {
        ahead = await this.views.writeAhead(written(decided));
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

  /** The purchase and its coupons as the request's events (and `pending`, about to be appended) make them; null unless sold whole. */
  private documents(writes: RequestWrites, purchaseId: string, pending: readonly PendingEvent[] = []): DecidedPurchase | null {
    const purchase = writes.documentsWritten(purchaseDetailsProjection, [purchaseId], pending).get(purchaseId);
    if (!purchase || purchase.fulfillmentState !== 'fulfilled' || purchase.couponsOwed > 0) return null;
    const issued = writes.documentsWritten(couponDetailsProjection, purchase.couponIds, pending);
    const coupons = purchase.couponIds.map((id) => issued.get(id));
    if (coupons.some((coupon) => coupon === undefined)) return null;
    return { purchase, coupons: coupons as CouponDetails[] };
  }
}

/** The documents to write, the coupons first: a reader who finds the purchase finds its coupons. */
const written = ({ purchase, coupons }: DecidedPurchase): InlineViews => [
  { collection: COUPON_DETAILS, documents: coupons },
  { collection: PURCHASE_DETAILS, documents: [purchase] },
];
