import { couponDetailsProjection } from './coupon-details/coupon-details.projection';
import { purchaseDetailsProjection } from './purchase-details/purchase-details.projection';

/** Every projection purchasing owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const purchasingProjections = [purchaseDetailsProjection, couponDetailsProjection];
