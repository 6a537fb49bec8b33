import { erasedProfile, userAccountsProjection, type UserAccount } from '@deals/accounts/projections';
import { bulkJobsProjection } from '@deals/bulk-jobs/projections';
import { cardLinkDetailsProjection, subscriptionsProjection } from '@deals/engagement/projections';
import type { Projection, RecordedEvent, ViewDocument } from '@deals/kernel';
import { batchDetailsProjection } from '@deals/messaging/projections';
import {
  couponDetailsProjection,
  purchaseDetailsProjection,
  purchasesOfHold,
  refundDetailsProjection,
} from '@deals/purchasing/projections';
import type { FeedEventType, FeedResourceType } from '../../domain/feed-event';

/** What a resource's view held before and after one log event, to decide which feed events it makes. */
export interface SourceChange {
  event: RecordedEvent;
  before: ViewDocument | null;
  after: ViewDocument;
  /** Feed events of this resource already made (each type at most once where that is the rule). */
  made: ReadonlySet<string>;
}

/**
 * One kind of resource the feed speaks of: the view its state is kept in (the context's own
 * projection, folded here again so that each feed event carries the resource as it was then), and
 * the feed events a change of it makes.
 */
export interface FeedSource {
  resource: FeedResourceType;
  projection: Projection;
  /** Log events that do not change the view but still make feed events, with the resources they touch. */
  extra?: Record<string, (event: RecordedEvent) => string[]>;
  /** What of the resource's state the feed keeps, when not all of it (personal data is kept in one place only). */
  kept?(state: ViewDocument): ViewDocument;
  emits(change: SourceChange): FeedEventType[];
}

const data = <T>(event: RecordedEvent) => event.data as T;

export const purchaseSource: FeedSource = {
  resource: 'purchase',
  projection: purchaseDetailsProjection as unknown as Projection,
  extra: {
    // A reservation whose hold lapsed: the inventory records it, the purchase does not change.
    UnitsReleased: (event) => purchasesOfHold(data<{ holdId: string }>(event).holdId),
  },
  emits({ event, after, made }) {
    const purchase = after as unknown as { paymentState: string; fulfillmentState: string; couponsOwed: number; paymentIntent?: unknown };
    switch (event.type) {
      case 'PurchaseReleased':
        return ['reservation.released'];
      case 'RefundSucceeded':
        return ['purchase.refunded'];
      case 'UnitsReleased': {
        const { reason } = data<{ reason: string }>(event);
        return reason === 'expired' && purchase.fulfillmentState === 'reserved' && !purchase.paymentIntent ? ['reservation.expired'] : [];
      }
    }
    const completed =
      purchase.paymentState === 'charged' &&
      purchase.fulfillmentState === 'fulfilled' &&
      purchase.couponsOwed === 0 &&
      !made.has('purchase.completed');
    return completed ? ['purchase.completed'] : [];
  },
};

export const couponSource: FeedSource = {
  resource: 'coupon',
  projection: couponDetailsProjection as unknown as Projection,
  emits({ event }) {
    switch (event.type) {
      case 'CouponRedeemed':
        return ['coupon.redeemed'];
      case 'CouponRedemptionRolledBack':
        return ['coupon.redemption_rolled_back'];
      case 'CouponCancelled':
      case 'CouponRefunded':
        return ['coupon.cancelled'];
      case 'CouponExpired':
        return ['coupon.expired'];
    }
    return [];
  },
};

/** A refund of a card purchase: asked for, then settled one way or the other. */
export const refundSource: FeedSource = {
  resource: 'refund',
  projection: refundDetailsProjection as unknown as Projection,
  emits({ event }) {
    switch (event.type) {
      case 'RefundRequested':
        return ['refund.created'];
      case 'RefundSucceeded':
        return ['refund.succeeded'];
      case 'RefundFailed':
        return ['refund.failed'];
    }
    return [];
  },
};

export const cardLinkSource: FeedSource = {
  resource: 'card_link',
  projection: cardLinkDetailsProjection as unknown as Projection,
  emits({ event, after }) {
    if ((after as unknown as { withdrawn?: boolean }).withdrawn) return [];
    switch (event.type) {
      case 'CardLinkOpened':
      case 'CardRelinked':
        return ['card_link.linked'];
      case 'CardUnlinked':
        return ['card_link.unlinked'];
      case 'CardLinkRedeemed':
        return ['card_link.redeemed'];
      case 'CardLinkFulfilled':
        return ['card_link.fulfilled'];
      case 'CardTransactionAuthorised':
        return ['card_link.transaction_authorised'];
      case 'CardTransactionCleared':
        return ['card_link.transaction_cleared'];
      case 'CardTransactionRefunded':
        return ['card_link.transaction_refunded'];
      // A refund took away what fulfilled it: the link is back as it was, linked or unlinked.
      case 'CardLinkFulfilmentReversed':
        return [(after as unknown as { state: string }).state === 'unlinked' ? 'card_link.unlinked' : 'card_link.linked'];
    }
    return [];
  },
};

export const batchSource: FeedSource = {
  resource: 'targeted_email_batch',
  projection: batchDetailsProjection,
  emits({ event, after }) {
    if (event.type !== 'BatchDelivered') return [];
    const { status } = after as unknown as { status: string };
    return status === 'processed' ? ['targeted_email_batch.processed'] : status === 'failed' ? ['targeted_email_batch.failed'] : [];
  },
};

export const subscriptionSource: FeedSource = {
  resource: 'subscription',
  projection: subscriptionsProjection as unknown as Projection,
  emits: ({ event }) => (event.type === 'SubscriptionStatusChanged' ? ['subscription.updated'] : []),
};

export const userSource: FeedSource = {
  resource: 'user',
  projection: userAccountsProjection as unknown as Projection,
  // A user's profile stays in the user's own view, which its erasure empties: the feed shows it as it is now.
  kept: (state) => {
    const user = state as UserAccount;
    return { ...user, emailKey: null, profile: erasedProfile(user.profile) } as UserAccount;
  },
  emits({ event }) {
    switch (event.type) {
      case 'UserRegistered':
        return ['user.created'];
      case 'UserProfileChanged':
      case 'UserDeleted':
      case 'UserRestored':
        return ['user.updated'];
      case 'UserPersonalDataErased':
        return ['user.erased'];
    }
    return [];
  },
};

/** A partner's bulk job: its completion, every item's result in (or, cancelled, those of the items run before). */
export const bulkJobSource: FeedSource = {
  resource: 'bulk_job',
  projection: bulkJobsProjection as unknown as Projection,
  emits: ({ event }) => (event.type === 'BulkJobCompleted' ? ['bulk_job.completed'] : []),
};

/** The sources whose resources have records of their own (a coupon's is its purchase's: see the projection). */
export const FEED_SOURCES: readonly FeedSource[] = [
  purchaseSource,
  refundSource,
  cardLinkSource,
  batchSource,
  subscriptionSource,
  userSource,
  bulkJobSource,
];
