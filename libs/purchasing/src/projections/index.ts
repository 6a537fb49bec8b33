import { couponDetailsProjection } from './coupon-details/coupon-details.projection';
import { purchaseDetailsProjection } from './purchase-details/purchase-details.projection';
import { refundDetailsProjection } from './refund-details/refund-details.projection';
import { resaleBuyerErasuresProjection } from './resale-buyer-erasures/resale-buyer-erasures.projection';
import { sandboxHoldsProjection } from './sandbox-holds/sandbox-holds.projection';

/** Every projection purchasing owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const purchasingProjections = [
  purchaseDetailsProjection,
  couponDetailsProjection,
  refundDetailsProjection,
  sandboxHoldsProjection,
  resaleBuyerErasuresProjection,
];
export {
  couponDetailsProjection,
  purchaseDetailsProjection,
  refundDetailsProjection,
  resaleBuyerErasuresProjection,
  sandboxHoldsProjection,
};
export type { CouponDetails } from './coupon-details/coupon-details.projection';
export type { PurchaseDetails } from './purchase-details/purchase-details.projection';
export type { RefundDetails } from './refund-details/refund-details.projection';
/** The purchases a hold may belong to (the partner event feed reads a lapsed reservation from its hold). */
export { purchasesOfHold } from '../domain/inventory/inventory.events';
