/** The partner-facing event types, each named `<resource>.<what happened>` as Stripe and Svix name theirs. */
export const FEED_EVENT_TYPES = [
  'purchase.completed',
  'purchase.refunded',
  'refund.created',
  'refund.succeeded',
  'refund.failed',
  'reservation.released',
  'reservation.expired',
  'coupon.redeemed',
  'coupon.redemption_rolled_back',
  'coupon.cancelled',
  'coupon.expired',
  'card_link.linked',
  'card_link.unlinked',
  'card_link.redeemed',
  'card_link.fulfilled',
  'card_link.transaction_authorised',
  'card_link.transaction_cleared',
  'card_link.transaction_refunded',
  'targeted_email_batch.processed',
  'targeted_email_batch.failed',
  'subscription.updated',
  'user.created',
  'user.updated',
  'user.erased',
  'bulk_job.completed',
] as const;

export type FeedEventType = (typeof FEED_EVENT_TYPES)[number];

/** The resources the feed speaks of, by their API names. */
export type FeedResourceType =
  'purchase' | 'coupon' | 'refund' | 'card_link' | 'targeted_email_batch' | 'subscription' | 'user' | 'bulk_job';

export const isFeedEventType = (type: string): type is FeedEventType => (FEED_EVENT_TYPES as readonly string[]).includes(type);
