import { Contention, NewEvent, StoreObserver } from '@deals/kernel';
import { Counter, Histogram, Metric } from 'prom-client';

type BusinessCounter = 'purchases' | 'coupons' | 'charges';

/** What an appended event says about the business: purchases, coupons and charges of stored cards, by outcome. */
function businessOutcomes(event: NewEvent): Array<[BusinessCounter, string]> {
  switch (event.type) {
    case 'PurchaseReserved':
      return [['purchases', 'reserved']];
    case 'PurchaseClaimed':
      return [['purchases', 'claimed']];
    case 'PurchasePaid':
      return [
        ['purchases', 'paid'],
        ['charges', 'charged'],
      ];
    case 'PurchaseNotPaid': {
      const outcome = (event.data as { outcome: string }).outcome;
      return [
        ['purchases', 'not_paid'],
        ['charges', outcome],
      ];
    }
    case 'PurchaseResold':
      return [['purchases', 'resold']];
    case 'PurchaseReleased':
      return [['purchases', 'released']];
    case 'CouponIssued':
      return [['coupons', 'issued']];
    case 'CouponRedeemed':
      return [['coupons', 'redeemed']];
    case 'CouponCancelled':
      return [['coupons', 'cancelled']];
    case 'CouponExpired':
      return [['coupons', 'expired']];
    default:
      return [];
  }
}

/**
 * The event store's counters (appends, events by type, commit groups and their time, the business
 * outcomes the events tell, contended writes): the store's observer, given to it as it opens
 * (where the process's metrics are on), listed among the process's by `ServiceMetrics`.
 */
export class StoreMetrics implements StoreObserver {
  private readonly appends = new Counter({
    name: 'deals_event_store_appends_total',
    help: 'appends acknowledged by the event store',
    registers: [],
  });
  private readonly events = new Counter({
    name: 'deals_event_store_events_total',
    help: 'events appended, by type',
    labelNames: ['type'],
    registers: [],
  });
  private readonly groups = new Histogram({
    name: 'deals_event_store_commit_group_size',
    help: 'appends committed together in one transaction (group commit)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [],
  });
  private readonly commits = new Histogram({
    name: 'deals_event_store_commit_duration_seconds',
    help: 'time from a group being sent to the log to its commit being acknowledged',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [],
  });
  private readonly outcomes = {
    purchases: new Counter({ name: 'deals_purchases_total', help: 'purchase events, by outcome', labelNames: ['outcome'], registers: [] }),
    coupons: new Counter({ name: 'deals_coupons_total', help: 'coupon events, by outcome', labelNames: ['outcome'], registers: [] }),
    charges: new Counter({
      name: 'deals_charges_total',
      help: 'charges of stored cards, by outcome: charged, declined, error',
      labelNames: ['outcome'],
      registers: [],
    }),
  };
  private readonly contention = new Counter({
    name: 'deals_event_store_contended_writes_total',
    help: 'batches of commands whose streams another process wrote first, by what followed: decided_again (read again), held (written with the stream held for them), gave_up (answered 503)',
    labelNames: ['outcome'],
    registers: [],
  });

  /** The counters, in the order the process lists them. */
  get metrics(): Metric[] {
    const { purchases, coupons, charges } = this.outcomes;
    return [this.appends, this.events, this.groups, this.commits, purchases, coupons, charges, this.contention];
  }

  appended(appended: readonly NewEvent[]): void {
    this.appends.inc();
    for (const event of appended) {
      this.events.inc({ type: event.type });
      for (const [counter, outcome] of businessOutcomes(event)) this.outcomes[counter].inc({ outcome });
    }
  }

  committed(count: number, seconds: number): void {
    this.groups.observe(count);
    this.commits.observe(seconds);
  }

  contended(outcome: Contention): void {
    this.contention.inc({ outcome });
  }
}
