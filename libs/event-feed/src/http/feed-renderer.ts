import { AccountQueries, AccountsSettings, toUser, USER_ACCOUNTS } from '@deals/accounts';
import { toBulkJob } from '@deals/bulk-jobs';
import { CatalogLinks } from '@deals/catalog';
import { toCardLink, toSubscription } from '@deals/engagement';
import { toBatch } from '@deals/messaging';
import { CouponLinks, CouponQr, toCoupon, toPurchase, toRefund } from '@deals/purchasing';
import { isSandbox, ViewProgress } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import type { FeedEvent } from '../projections/event-feed/feed-documents';

type View<T extends (...args: never[]) => unknown> = Parameters<T>[0];

/**
 * A feed event as partners read it (GET /v1/events) and receive it (webhooks): its resource in the
 * resource's own API shape, as it was when the event happened (a user's names: as they are now), by
 * the same functions that write the resource's own answers.
 */
@Injectable()
export class FeedRenderer {
  constructor(
    private readonly links: CouponLinks,
    private readonly qr: CouponQr,
    private readonly catalog: CatalogLinks,
    private readonly accounts: AccountsSettings,
    private readonly users: AccountQueries,
    private readonly progress: ViewProgress,
  ) {}

  async render(event: FeedEvent) {
    return {
      id: event._id,
      type: event.type,
      created_at: event.createdAt,
      resource: event.resourceType,
      resource_id: event.resourceId,
      sequence: event.sequence,
      livemode: !isSandbox(event.partnerId),
      data: await this.data(event),
      ...(event.details ?? {}),
    };
  }

  private async data(event: FeedEvent): Promise<Record<string, unknown>> {
    const at = Date.parse(event.createdAt);
    const state = event.snapshot.state as never;
    const coupon = async (view: View<typeof toCoupon>, withPrintUrl = true) =>
      toCoupon(view, at, this.links, await this.qr.base64(view.redemptionCode), withPrintUrl);
    switch (event.resourceType) {
      case 'purchase':
        return toPurchase(state, await Promise.all((event.snapshot.coupons ?? []).map((c) => coupon(c as never))), this.catalog, at);
      case 'coupon':
        return coupon(state);
      case 'refund':
        return toRefund(state);
      case 'card_link':
        return toCardLink(state);
      case 'targeted_email_batch':
        return toBatch(state);
      case 'subscription':
        return toSubscription(state);
      case 'bulk_job':
        return toBulkJob(state, this.catalog.apiBaseUrl, !isSandbox(event.partnerId));
      case 'user': {
        // The feed keeps no personal data: a user's names are as the user's own view has them now (none once erased).
        const kept = event.snapshot.state as View<typeof toUser>;
        // Kept by another process, the user's view may be behind the feed: it is read once it shows the event.
        await this.progress.waitFor([USER_ACCOUNTS], event._pos);
        const now = await this.users.userEvenDeleted(event.partnerId, kept._id);
        return toUser(
          { ...kept, profile: { ...kept.profile, firstName: now?.profile.firstName ?? null, lastName: now?.profile.lastName ?? null } },
          this.accounts.defaultAvatarUrl,
        );
      }
    }
  }
}
