import { EventStore, handleCommand, OPERATOR, PaymentGateway, ViewStore } from '@deals/kernel';
import { Clock } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { CouponIssuer } from '../commands/coupon-issuer';
import { inventoryDecider } from '../domain/inventory/inventory.decider';
import { inventoryStream } from '../domain/inventory/inventory.events';
import { purchaseDecider } from '../domain/purchase/purchase.decider';
import { purchaseStream } from '../domain/purchase/purchase.events';
import { PURCHASE_DETAILS, PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';

const SYSTEM = { ...OPERATOR, actor: 'system:recovery' };

/**
 * After a crash, finishes the card purchases a process left between reserving and recording the
 * payment, by what the processor recorded under the purchase's idempotency key: approved → sell
 * the units and issue the coupons (no charge without coupons); declined or failed → release; no
 * charge at all → release (nothing was taken). Never charges. Then issues the coupons of every
 * fulfilled purchase (any path) whose process stopped before all its coupons were issued.
 */
@Injectable()
export class RecoverInterruptedPayments {
  private readonly logger = new Logger('Recovery');

  constructor(private readonly store: EventStore, private readonly views: ViewStore, private readonly gateway: PaymentGateway, private readonly coupons: CouponIssuer, private readonly clock: Clock) {}

  async run(): Promise<number> {
    const open = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { fulfillmentState: 'reserved', paymentIntent: { $ne: null } });
    for (const purchase of open) {
      if (!purchase.paymentIntent) continue;
      const caller = { ...SYSTEM, partnerId: purchase.partnerId };
      const outcome = await this.gateway.chargeOutcome(purchase._id);
      if (outcome?.status === 'approved') {
        const { userId, creditCardId } = purchase.paymentIntent;
        await this.coupons.complete(purchase._id, caller, (holdId) => ({
          type: 'RecordPayment', data: { purchaseId: purchase._id, partnerId: purchase.partnerId, userId, creditCardId, chargeId: outcome.chargeId, sessionId: null, holdId },
        }));
      } else {
        const context = { now: this.clock.now(), metadata: caller };
        await handleCommand(this.store, inventoryStream(purchase.deal.dealId), inventoryDecider, { type: 'ReleaseHold', data: { dealId: purchase.deal.dealId, holdId: purchase._id, reason: 'payment_failed' } }, context);
        await handleCommand(this.store, purchaseStream(purchase._id), purchaseDecider, {
          type: 'RecordNonPayment',
          data: { purchaseId: purchase._id, partnerId: purchase.partnerId, outcome: outcome?.status === 'declined' ? 'declined' : 'error', reason: outcome ? outcome.reason : 'interrupted before charging' },
        }, context);
      }
      this.logger.warn(`recovered purchase ${purchase._id}: ${outcome?.status ?? 'never charged'}`);
    }
    const owing = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { couponsOwed: { $gt: 0 } });
    for (const purchase of owing) {
      await this.coupons.issueOwed(purchase._id, { ...SYSTEM, partnerId: purchase.partnerId });
      this.logger.warn(`issued the ${purchase.couponsOwed} coupon(s) purchase ${purchase._id} was owed`);
    }
    return open.length + owing.length;
  }
}
