import { AccountQueries } from '@deals/accounts';
import { Clock } from '@deals/kernel';
import { BatchQueries } from '@deals/messaging';
import { CouponDetails, couponState, fulfillmentStateAt, PurchaseDetails, PurchaseQueries } from '@deals/purchasing';
import { humanUtc } from '@deals/wire';
import { Injectable } from '@nestjs/common';

const SHOWN = 50;
/** The longest look-up: longer than any id, email or reference it could find. */
export const MAX_QUERY_LENGTH = 200;

const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/**
 * What the support pages show, always of one partner: its batches, and its purchases and coupons
 * found by id, user email or transaction reference (another partner's are not found).
 */
@Injectable()
export class SupportLookup {
  constructor(
    private readonly purchases: PurchaseQueries,
    private readonly accounts: AccountQueries,
    private readonly batches: BatchQueries,
    private readonly clock: Clock,
  ) {}

  async recentBatches(partnerId: string) {
    return (await this.batches.recent(partnerId, SHOWN)).map((b) => ({
      id: b._id,
      dealId: b.dealId,
      sendAt: humanUtc(b.sendAt),
      mode: b.mode,
      status: b.sending ? 'sending' : b.status,
      recipients: b.userIds.length,
      sent: b.sent,
      failed: b.failed,
      skipped: b.skipped,
    }));
  }

  async find(partnerId: string, query: string) {
    const q = query.trim();
    const empty = {
      user: null,
      purchases: [] as ReturnType<SupportLookup['purchaseRow']>[],
      coupons: [] as ReturnType<SupportLookup['couponRow']>[],
    };
    if (!q || q.length > MAX_QUERY_LENGTH) return { ...empty, found: false };
    if (q.includes('@')) {
      const user = await this.accounts.userByEmailEvenDeleted(partnerId, q);
      if (!user) return { ...empty, found: false };
      const [purchases, coupons] = await Promise.all([
        this.purchases.userPurchases(partnerId, user._id, 0, SHOWN),
        this.purchases.userCoupons(partnerId, user._id, null, 0, SHOWN),
      ]);
      const name = [user.profile.firstName, user.profile.lastName].filter(Boolean).join(' ');
      return {
        found: true,
        user: { id: user._id, email: user.profile.email, name, deleted: user.deleted },
        purchases: purchases.map((p) => this.purchaseRow(p)),
        coupons: coupons.map((c) => this.couponRow(c)),
      };
    }
    const [purchase, coupon, byReference] = await Promise.all([
      this.purchases.purchase(partnerId, q),
      this.purchases.coupon(q),
      this.purchases.byTransactionReference(partnerId, q, SHOWN),
    ]);
    const purchases = [...(purchase ? [purchase] : []), ...byReference.filter((p) => p._id !== purchase?._id)];
    const coupons = coupon && coupon.partnerId === partnerId ? [coupon] : [];
    return {
      ...empty,
      found: purchases.length + coupons.length > 0,
      purchases: purchases.map((p) => this.purchaseRow(p)),
      coupons: coupons.map((c) => this.couponRow(c)),
    };
  }

  private purchaseRow(p: PurchaseDetails) {
    return {
      id: p._id,
      deal: p.deal.title,
      userId: p.userId ?? '',
      quantity: p.quantity,
      amount: money(p.amountCents),
      payment: p.paymentState,
      state: fulfillmentStateAt(p, this.clock.now().getTime()),
      reference: p.transactionReference ?? '',
      coupons: p.couponIds,
      createdAt: humanUtc(p.createdAt),
    };
  }

  private couponRow(c: CouponDetails) {
    return {
      id: c._id,
      purchaseId: c.purchaseId,
      userId: c.userId ?? '',
      state: couponState(c, this.clock.now().getTime()),
      redemptionCode: c.redemptionCode,
      issuedAt: humanUtc(c.issuedAt),
      expires: c.expiresAt === null ? 'never' : humanUtc(new Date(c.expiresAt)),
    };
  }
}
