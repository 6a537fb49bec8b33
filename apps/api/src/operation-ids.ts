/**
 * Each operation's `operationId`, by `METHOD /path` as the description names it: the name a client
 * generator gives its method. A published id never changes (docs/versioning.md); a new operation gets
 * one here, and the description's lint refuses an operation without one (.spectral.yaml).
 * A path kept as an alias of another (`.json` suffixes, `/v1/deals/{deal_id}`) gets its own id.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /health': 'getHealth',
  'GET /health/live': 'getLiveness',
  'GET /health/ready': 'getReadiness',
  // catalog
  'GET /api/v1/regions': 'listRegions',
  'GET /api/v1/regions/{region_id}': 'getRegion',
  'GET /deals/{deal_id}': 'getDeal',
  'GET /v1/deals/{deal_id}': 'getDealV1',
  'GET /api/v3/deals': 'listDealsV3',
  'GET /v1/deals': 'listDealsV1',
  'GET /deals/locate': 'locateDeals',
  'GET /regions/{place}/deals': 'listRegionDeals',
  // accounts
  'POST /users': 'createUser',
  'GET /users/{user_id}': 'getUser',
  'PUT /users/{user_id}': 'updateUser',
  'PUT /api/v1/users/{email}/update_by_email': 'updateUserByEmail',
  'POST /users/{user}/access_tokens': 'createAccessToken',
  'GET /credit_cards': 'listCreditCards',
  'POST /credit_cards': 'createCreditCard',
  'PUT /credit_cards/{credit_card_id}/default': 'setDefaultCreditCard',
  'GET /audit/partners/{partner_id}': 'getPartnerAudit',
  // purchasing
  'POST /purchases/reserve': 'reservePurchase',
  'POST /purchases': 'createPurchase',
  'POST /v1/purchases/full.json': 'createFullPurchase',
  'PUT /purchases/{purchase_id}/claim': 'claimPurchase',
  'PUT /purchases/{purchase_id}/claim.json': 'claimPurchaseJson',
  'PUT /purchases/{purchase_id}/release': 'releasePurchase',
  'PUT /purchases/{purchase_id}/release.json': 'releasePurchaseJson',
  'GET /purchases/{purchase_id}': 'getPurchase',
  'GET /users/{user_id}/purchases': 'listUserPurchases',
  'GET /users/{user_id}/coupons': 'listUserCoupons',
  'PUT /users/{user_id}/coupons/{coupon_id}/redeem': 'redeemUserCoupon',
  'PUT /coupons/{coupon_id}/redeem': 'redeemCoupon',
  'GET /coupons/{coupon_id}/qr.png': 'getCouponQrImage',
  'GET /coupons/{coupon_id}/print': 'getCouponPrintPage',
  'POST /api/v3/resellers/purchases': 'createResellerPurchase',
  'POST /api/v3/resellers/purchases.json': 'createResellerPurchaseJson',
  'GET /api/v3/coupons/{coupon_id}': 'getResellerCoupon',
  'DELETE /api/v3/coupons/{coupon_id}/cancel': 'cancelResellerCoupon',
  'GET /audit/purchases/{purchase_id}': 'getPurchaseAudit',
  // engagement
  'POST /card_links': 'createCardLinks',
  'PUT /card_links/{card_link_id}/unlink': 'unlinkCardLink',
  'PUT /card_links/{card_link_id}/link': 'relinkCardLink',
  'PUT /card_links/{card_link_id}/redeem': 'redeemCardLink',
  'GET /users/{user_id}/card_links': 'listUserCardLinks',
  'POST /saved_deals': 'createSavedDeal',
  'DELETE /saved_deals/{saved_deal_id}': 'deleteSavedDeal',
  'GET /users/{user_id}/saved_deals': 'listUserSavedDeals',
  'POST /users/{user_id}/subscriptions': 'createSubscription',
  'GET /users/{user_id}/subscriptions': 'listUserSubscriptions',
  'GET /subscriptions/{subscription_id}': 'getSubscription',
  'PUT /subscriptions/{subscription_id}': 'updateSubscription',
  'POST /subscriptions/{subscription_id}/unsubscribe': 'unsubscribeOneClick',
  'GET /subscriptions/{subscription_id}/unsubscribe': 'unsubscribeByLink',
  // messaging
  'POST /v1/targeted_email/batches': 'createTargetedEmailBatch',
  'GET /v1/targeted_email/batches/{batch_id}': 'getTargetedEmailBatch',
  'DELETE /v1/targeted_email/batches/{batch_id}': 'cancelTargetedEmailBatch',
};
