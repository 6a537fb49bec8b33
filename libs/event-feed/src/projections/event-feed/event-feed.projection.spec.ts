import type { RecordedEvent, ViewDocument } from '@deals/kernel';
import { eventFeedProjection } from './event-feed.projection';
import type { FeedEvent, WebhookDelivery } from './feed-documents';

let position = 0;
const at = '2026-06-15T12:00:00.000Z';
const recorded = (type: string, data: Record<string, unknown>, streamId = 'x'): RecordedEvent => {
  position += 1;
  return {
    id: `log-${position}`,
    type,
    data,
    metadata: { occurredAt: at },
    streamId,
    revision: 0,
    position: String(position).padStart(12, '0'),
  };
};

/** Folds batches into a map of documents, as the runner would commit them. */
async function fold(store: Map<string, ViewDocument>, events: RecordedEvent[]): Promise<ViewDocument[]> {
  // As the runner gives them: only the types the projection handles.
  events = events.filter((e) => eventFeedProjection.handles.includes(e.type));
  const changed = await eventFeedProjection.applyBatch!(events, {
    get: async (ids) => new Map(ids.filter((id) => store.has(id)).map((id) => [id, store.get(id)! as never])),
  });
  for (const doc of changed) store.set(doc._id, doc);
  return changed;
}

const feed = (store: Map<string, ViewDocument>) =>
  [...store.values()].filter((d): d is FeedEvent => (d as FeedEvent).kind === 'event').sort((a, b) => (a.order < b.order ? -1 : 1));

const deal = { dealId: 'spa', title: 'Spa', type: 'daily-deal', imageUrl: null, unitPrice: 2500, expiresAt: null, expirationDays: null };

function purchaseHistory() {
  position = 0;
  return [
    recorded('UserRegistered', {
      userId: 'u1',
      partnerId: 'p1',
      profile: { email: 'a@example.com' },
      credits: 0,
      sessionId: null,
      registeredAt: at,
    }),
    recorded('WebhookEndpointCreated', {
      endpointId: 'we1',
      partnerId: 'p1',
      url: 'https://hooks.example.com',
      description: '',
      types: ['purchase.completed', 'coupon.cancelled'],
      enabled: true,
      secretSalt: 's',
      createdAt: at,
    }),
    recorded('PurchaseReserved', {
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
      recorded('CouponIssued', {
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
    recorded('PurchasePaid', {
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
    recorded('CouponCancelled', { couponId: 'pu1-2', cancelledAt: at }),
  ];
}

describe('the partner event feed', () => {
  it('makes each resource’s feed events in log order, with the resource as it was then', async () => {
    const store = new Map<string, ViewDocument>();
    await fold(store, purchaseHistory());
    const events = feed(store);
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
    const store = new Map<string, ViewDocument>();
    await fold(store, purchaseHistory());
    const deliveries = [...store.values()].filter((d): d is WebhookDelivery => (d as WebhookDelivery).kind === 'delivery');
    expect(deliveries.map((d) => [d.eventType, d.endpointId, d.status]).sort()).toEqual([
      ['coupon.cancelled', 'we1', 'pending'],
      ['purchase.completed', 'we1', 'pending'],
    ]);
  });

  it('makes the same events with the same ids when the log is replayed, in one batch or event by event', async () => {
    const once = new Map<string, ViewDocument>();
    await fold(once, purchaseHistory());
    const oneByOne = new Map<string, ViewDocument>();
    for (const event of purchaseHistory()) await fold(oneByOne, [event]);
    expect([...oneByOne.entries()].sort()).toEqual([...once.entries()].sort());
    // Applying the events again changes nothing.
    expect(await fold(once, purchaseHistory())).toEqual([]);
  });

  it('reads the resources a batch touches in one read, not one an event', async () => {
    position = 0;
    const reserved = (n: number) =>
      recorded('PurchaseReserved', {
        purchaseId: `pu${n}`,
        partnerId: 'p1',
        deal,
        quantity: 1,
        holdId: `pu${n}`,
        reservedAt: at,
        holdExpiresAt: at,
        payment: { userId: 'u1', creditCardId: 'c1', sessionId: null },
      });
    const events = [1, 2, 3, 4, 5].map(reserved).filter((e) => eventFeedProjection.handles.includes(e.type));
    const reads: string[][] = [];
    await eventFeedProjection.applyBatch!(events, {
      get: async (ids) => {
        reads.push([...ids]);
        return new Map();
      },
    });
    expect(reads[0]).toEqual(expect.arrayContaining([1, 2, 3, 4, 5].map((n) => `resource:purchase:pu${n}`)));
    expect(reads.flat().filter((id) => id.startsWith('resource:'))).toHaveLength(5);
  });

  it('tells a batch processed or failed, once delivered', async () => {
    position = 100;
    const store = new Map<string, ViewDocument>();
    const scheduled = (batchId: string) =>
      recorded('BatchScheduled', {
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
      recorded('BatchDelivered', {
        batchId,
        status,
        sent: status === 'processed' ? 1 : 0,
        failed: status === 'failed' ? 1 : 0,
        skipped: 0,
        at,
      });
    await fold(store, [scheduled('b1'), scheduled('b2'), delivered('b1', 'processed'), delivered('b2', 'failed')]);
    expect(feed(store).map((e) => [e.type, e.resourceId, (e.snapshot.state as unknown as { status: string }).status])).toEqual([
      ['targeted_email_batch.processed', 'b1', 'processed'],
      ['targeted_email_batch.failed', 'b2', 'failed'],
    ]);
  });
});
