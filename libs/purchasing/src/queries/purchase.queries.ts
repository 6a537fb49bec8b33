import { EventStore, findOfPartner, ViewFilter, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { COUPON_DETAILS, CouponDetails } from '../projections/coupon-details/coupon-details.projection';
import { PURCHASE_DETAILS, PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';
import { REFUND_DETAILS, RefundDetails } from '../projections/refund-details/refund-details.projection';
import type { ShippingAddress } from '../domain/purchase/shipping-address';
import { purchaseStream, type PurchaseReserved } from '../domain/purchase/purchase.events';

export type CouponFilterWord = 'valid' | 'redeemed' | 'expired';

/** Coupons in a state at `now` (the filter words valid, redeemed, expired), as a view filter. */
export function couponStateFilter(words: CouponFilterWord[], now: number): ViewFilter {
  const by: Record<CouponFilterWord, ViewFilter> = {
    valid: { redeemedAt: null, cancelledAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] },
    redeemed: { redeemedAt: { $ne: null }, cancelledAt: null },
    expired: { redeemedAt: null, cancelledAt: null, expiresAt: { $lte: now } },
  };
  return words.length === 1 ? by[words[0]] : { $or: words.map((w) => by[w]) };
}

/** Reads of purchases and coupons, always within one partner. */
@Injectable()
export class PurchaseQueries {
  constructor(
    private readonly views: ViewStore,
    private readonly store: EventStore,
  ) {}

  async purchase(partnerId: string, purchaseId: string): Promise<PurchaseDetails | null> {
    return findOfPartner<PurchaseDetails>(this.views, PURCHASE_DETAILS, purchaseId, partnerId);
  }

  /** The partner's reseller sales recorded under this transaction reference (one, unless the reference was reused). */
  byTransactionReference(partnerId: string, reference: string, limit: number): Promise<PurchaseDetails[]> {
    return this.views.find<PurchaseDetails>(
      PURCHASE_DETAILS,
      { partnerId, transactionReference: reference },
      { sort: { createdAt: -1 }, limit },
    );
  }

  userPurchases(partnerId: string, userId: string, skip: number, limit: number): Promise<PurchaseDetails[]> {
    return this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { userId, partnerId }, { sort: { createdAt: -1, _id: 1 }, skip, limit });
  }

  countUserPurchases(partnerId: string, userId: string): Promise<number> {
    return this.views.count(PURCHASE_DETAILS, { userId, partnerId });
  }

  /** Units of `dealId` sold to a user of this partner (fulfilled purchases and claims), as the views show them now. */
  async unitsBought(partnerId: string, userId: string, dealId: string): Promise<number> {
    const bought = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, {
      userId,
      partnerId,
      'deal.dealId': dealId,
      fulfillmentState: 'fulfilled',
    });
    return bought.reduce((sum, purchase) => sum + purchase.quantity, 0);
  }

  /** Units of each deal sold to a user of this partner (fulfilled purchases and claims), as the views show them now. */
  async unitsBoughtByDeal(partnerId: string, userId: string): Promise<Map<string, number>> {
    const bought = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { userId, partnerId, fulfillmentState: 'fulfilled' });
    const units = new Map<string, number>();
    for (const purchase of bought) units.set(purchase.deal.dealId, (units.get(purchase.deal.dealId) ?? 0) + purchase.quantity);
    return units;
  }

  /**
   * A shipping address given with an earlier purchase of this partner: read from that purchase's
   * reservation in the log (null once its buyer's personal data was erased).
   */
  async shippingAddress(partnerId: string, addressId: string): Promise<ShippingAddress | null> {
    const found = await this.views.findOne<PurchaseDetails>(PURCHASE_DETAILS, { shippingAddressId: addressId, partnerId });
    if (!found) return null;
    const reserved = (await this.store.readStream(purchaseStream(found._id))).find((event) => event.type === 'PurchaseReserved');
    const shipping = (reserved?.data as PurchaseReserved['data'] | undefined)?.shipping;
    return shipping?.id === addressId ? shipping : null;
  }

  /** The coupons of these ids, in the order given (a purchase's: by coupon number). */
  coupons(ids: string[]): Promise<CouponDetails[]> {
    return this.views.findByIds<CouponDetails>(COUPON_DETAILS, ids);
  }

  async coupon(couponId: string): Promise<CouponDetails | null> {
    return this.views.findById<CouponDetails>(COUPON_DETAILS, couponId);
  }

  userCoupons(partnerId: string, userId: string, state: ViewFilter | null, skip: number, limit: number): Promise<CouponDetails[]> {
    return this.views.find<CouponDetails>(
      COUPON_DETAILS,
      { userId, partnerId, ...(state ?? {}) },
      { sort: { issuedAt: -1, purchaseId: 1, number: 1 }, skip, limit },
    );
  }

  countUserCoupons(partnerId: string, userId: string, state: ViewFilter | null): Promise<number> {
    return this.views.count(COUPON_DETAILS, { userId, partnerId, ...(state ?? {}) });
  }

  async refund(partnerId: string, refundId: string): Promise<RefundDetails | null> {
    return findOfPartner<RefundDetails>(this.views, REFUND_DETAILS, refundId, partnerId);
  }

  /** A purchase's refunds, oldest first. */
  purchaseRefunds(partnerId: string, purchaseId: string): Promise<RefundDetails[]> {
    return this.views.find<RefundDetails>(REFUND_DETAILS, { purchaseId, partnerId }, { sort: { createdAt: 1, _id: 1 } });
  }

  /** A user's refunds, newest first. */
  userRefunds(partnerId: string, userId: string, skip: number, limit: number): Promise<RefundDetails[]> {
    return this.views.find<RefundDetails>(REFUND_DETAILS, { partnerId, userId }, { sort: { createdAt: -1, _id: 1 }, skip, limit });
  }

  countUserRefunds(partnerId: string, userId: string): Promise<number> {
    return this.views.count(REFUND_DETAILS, { partnerId, userId });
  }
}
