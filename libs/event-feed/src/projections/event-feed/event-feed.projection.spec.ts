import type { ViewDocument } from '@deals/kernel';
import { batchProjectionSpec, SpecEvent } from '@deals/testing';
import { eventFeedProjection } from './event-feed.projection';
import type { FeedEvent, WebhookDelivery } from './feed-documents';

const at = '2026-06-15T12:00:00.000Z';
const spec = batchProjectionSpec(eventFeedProjection, { streamId: 'x', occurredAt: at });
const event = (type: string, data: Record<string, unknown>): SpecEvent => ({ type, data });

const feed = (store: Map<string, ViewDocument>) =>
  [...store.values()].filter((d): d is FeedEvent => (d as FeedEvent).kind === 'event').sort((a, b) => (a.order < b.order ? -1 : 1));

const deal = { dealId: 'spa', title: 'Spa', type: 'daily-deal', imageUrl: null, unitPrice: 2500, expiresAt: null, expirationDays: null };

function purchaseHistory() {
  return [
    event('UserRegistered', {
      userId: 'u1',
      partnerId: 'p1',
      profile: { email: 'a@example.com' },
      credits: 0,
      sessionId: null,
      registeredAt: at,
    }),
    event('WebhookEndpointCreated', {
      endpointId: 'we1',
      partnerId: 'p1',
      url: 'https://hooks.example.com',
      description: '',
      types: ['purchase.completed', 'coupon.cancelled'],
      enabled: true,
      secretSalt: 's',
      createdAt: at,
    }),
    event('PurchaseReserved', {
      purchaseId: 'pu1',
      partnerId: 'p1',
      deal,
      quantity: 2,
      holdId: 'pu1',
      reservedAt: at,
      holdExpiresAt: at,
      payment: { userId: 'u1', creditCardId: 'c1', sessionId: null },
    }),
    ...[1, 2].map((n) =>
      event('CouponIssued', {
        couponId: `pu1-${n}`,
        purchaseId: 'pu1',
        partnerId: 'p1',
        userId: 'u1',
        dealId: 'spa',
        dealType: 'daily-deal',
        barcode: `b${n}`,
        redemptionCode: `r${n}`,
        expiresAt: null,
        issuedAt: at,
      }),
    ),
    event('PurchasePaid', {
      purchaseId: 'pu1',
      userId: 'u1',
      creditCardId: 'c1',
      amountCents: 5000,
      chargeId: 'ch',
      holdId: 'pu1',
      couponIds: ['pu1-1', 'pu1-2'],
      sessionId: null,
      paidAt: at,
    }),
    event('CouponCancelled', { couponId: 'pu1-2', cancelledAt: at }),
  ];
}

describe('the partner event feed', () => {
  it('makes each resource’s feed events in log order, with the resource as it was then', async () => {
    const events = feed(await spec.when(...purchaseHistory()).documents());
    expect(events.map((e) => [e.type, e.resourceId, e.sequence])).toEqual([
      ['user.created', 'u1', 1],
      ['purchase.completed', 'pu1', 1],
      ['coupon.cancelled', 'pu1-2', 1],
      ['purchase.refunded', 'pu1', 2],
    ]);
    const completed = events[1];
    expect(completed.partnerId).toBe('p1');
    expect((completed.snapshot.state as unknown as { paymentState: string }).paymentState).toBe('charged');
    expect(completed.snapshot.coupons!.map((c) => [c._id, (c as unknown as { cancelledAt: string | null }).cancelledAt])).toEqual([
      ['pu1-1', null],
      ['pu1-2', null],
    ]);
    expect((events[3].snapshot.coupons![1] as unknown as { cancelledAt: string }).cancelledAt).toBe(at);
  });

  it('delivers each event to the endpoints listening for its type when it happened', async () => {
    const store = await spec.when(...purchaseHistory()).documents();
    const deliveries = [...store.values()].filter((d): d is WebhookDelivery => (d as WebhookDelivery).kind === 'delivery');
    expect(deliveries.map((d) => [d.eventType, d.endpointId, d.status]).sort()).toEqual([
      ['coupon.cancelled', 'we1', 'pending'],
      ['purchase.completed', 'we1', 'pending'],
    ]);
  });

  it('makes the same events with the same ids when the log is replayed, in one batch or event by event', async () => {
    const history = spec.given(...purchaseHistory());
    await history.thenSameInOneBatch();
    // Applying the events again changes nothing.
    await history.thenReplayChangesNothing();
  });

  it('reads the resources a batch touches in one read, not one an event', async () => {
    const reserved = (n: number) =>
      event('PurchaseReserved', {
        purchaseId: `pu${n}`,
        partnerId: 'p1',
        deal,
        quantity: 1,
        holdId: `pu${n}`,
        reservedAt: at,
        holdExpiresAt: at,
        payment: { userId: 'u1', creditCardId: 'c1', sessionId: null },
      });
    const reads = await spec.when(...[1, 2, 3, 4, 5].map(reserved)).lastBatchReads();
    expect(reads[0]).toEqual(expect.arrayContaining([1, 2, 3, 4, 5].map((n) => `resource:purchase:pu${n}`)));
    expect(reads.flat().filter((id) => id.startsWith('resource:'))).toHaveLength(5);
  });

  it('tells a batch processed or failed, once delivered', async () => {
    const scheduled = (batchId: string) =>
      event('BatchScheduled', {
        batchId,
        partnerId: 'p1',
        dealId: 'spa',
        userIds: ['u1'],
        mode: 'augment',
        sendAt: at,
        sendDay: '2026-06-15',
        createdAt: at,
      });
    const delivered = (batchId: string, status: 'processed' | 'failed') =>
      event('BatchDelivered', {
        batchId,
        status,
        sent: status === 'processed' ? 1 : 0,
        failed: status === 'failed' ? 1 : 0,
        skipped: 0,
        at,
      });
    const store = await spec.when(scheduled('b1'), scheduled('b2'), delivered('b1', 'processed'), delivered('b2', 'failed')).documents();
    expect(feed(store).map((e) => [e.type, e.resourceId, (e.snapshot.state as unknown as { status: string }).status])).toEqual([
      ['targeted_email_batch.processed', 'b1', 'processed'],
      ['targeted_email_batch.failed', 'b2', 'failed'],
    ]);
  });
});
