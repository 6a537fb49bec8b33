/** Purchasing: inventory, purchases, coupons. */
export { PurchasingHttpModule, PurchasingModule } from './purchasing.module';
export { StockInventory } from './commands/stock-inventory/stock-inventory.command';
export { inventoryStream, partnerInventoryStream } from './domain/inventory/inventory.events';
export { stockTotalIssues } from './domain/inventory/unit-counts';
export { CouponLinks, KeyedCouponLinks } from './http/purchase.answers';
export { CouponCodeKey } from './commands/purchase-steps/coupon-codes';
export { ReleaseExpiredHolds } from './reactions/release-expired-holds.reaction';
export { CouponExpirySettings, EXPIRE_COUPONS_JOB, ExpireCoupons } from './reactions/expire-coupons.reaction';
export type { ExpirySweep } from './reactions/expire-coupons.reaction';
export { PurchaseAudit } from './audit/purchase-audit';
export { PurchaseQueries } from './queries/purchase.queries';
export { RecoverInterruptedPayments } from './reactions/recover-interrupted-payments.reaction';
export type { AuditEntry } from './audit/purchase-audit';
export { PURCHASE_DETAILS } from './projections/purchase-details/purchase-details.projection';
/** A purchase's fulfilment at an instant: a reservation whose hold lapsed reads released. */
export { fulfillmentStateAt } from './projections/purchase-details/purchase-details.projection';
export { REFUND_DETAILS } from './projections/refund-details/refund-details.projection';
export { COUPON_DETAILS } from './projections/coupon-details/coupon-details.projection';
export type { CouponDetails } from './projections/coupon-details/coupon-details.projection';
export type { PurchaseDetails } from './projections/purchase-details/purchase-details.projection';
export { couponState } from './domain/coupon/coupon.decider';

export { purchasingProjections } from './projections';
/** A purchase and a coupon in their API shapes (the partner event feed renders them too). */
export { toCoupon, toPurchase } from './http/purchase.answers';
export { toRefund } from './http/refunds.answers';
export { CouponQr } from './coupon-images/coupon-qr';
export { RefundPurchase, RefundSteps } from './commands/refund-purchase/refund-purchase.command';
export { REFUND_REASONS } from './domain/refund/refund-rules';
export { refundOf } from './domain/purchase/purchase.decider';
export type { RefundReason } from './domain/refund/refund-rules';
/** Where purchases keep personal data in the log (a shipping address, a reseller sale's buyer), and the event that erases a reseller sale's buyer. */
export { PURCHASES_ERASURE_EVENTS, PURCHASES_PERSONAL_FIELDS } from './domain/purchase/purchase-personal-data';
/** The erasure of a reseller sale's buyer (its partner's call, the operator's CLI), and its completion at start. */
export { EraseResaleBuyer } from './commands/erase-resale-buyer/erase-resale-buyer.command';
export { FinishResaleBuyerErasures } from './commands/erase-resale-buyer/finish-resale-buyer-erasures';
export { purchaseStream } from './domain/purchase/purchase.events';
/** A gift purchase's mail: its job (armed when the gift is sold), the purchase's stream it reads, and the record of its outcome. */
export { giftMailJob, MAIL_GIFT_JOB } from './commands/purchase-steps/gift-mail-job';
export { purchaseDecider } from './domain/purchase/purchase.decider';
export type { RecordGiftMail } from './domain/purchase/purchase.decider';
export type { GiftMailed, PurchaseEvent, PurchaseReserved } from './domain/purchase/purchase.events';
/** The call a bulk job's coupon-redemption items stand for. */
export { RedeemCoupon } from './commands/redeem-coupon/redeem-coupon.command';
export { couponStream } from './domain/coupon/coupon.events';
