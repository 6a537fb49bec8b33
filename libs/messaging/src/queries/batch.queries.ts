import { findOfPartner, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { BATCH_DETAILS, BatchDetails } from '../projections/batch-details/batch-details.projection';

/** Reads of batches. */
@Injectable()
export class BatchQueries {
  constructor(private readonly views: ViewStore) {}

  async batch(partnerId: string, batchId: string): Promise<BatchDetails | null> {
    return findOfPartner<BatchDetails>(this.views, BATCH_DETAILS, batchId, partnerId);
  }

  /** The partner's latest batches, newest first, with their delivery counts. */
  recent(partnerId: string, limit: number): Promise<BatchDetails[]> {
    return this.views.find<BatchDetails>(BATCH_DETAILS, { partnerId }, { sort: { createdAt: -1, _id: -1 }, limit });
  }

  /** Batches not yet delivered (pending, being sent), to arm their jobs at start. */
  undelivered(): Promise<BatchDetails[]> {
    return this.views.find<BatchDetails>(BATCH_DETAILS, { status: 'pending' });
  }

  /** Users whose daily email a `suppress` batch of that UTC day holds back (docs/decisions.md "Daily regional email"). */
  async suppressedOn(day: string): Promise<Set<string>> {
    const batches = await this.views.find<BatchDetails>(BATCH_DETAILS, { sendDay: day, mode: 'suppress', status: { $ne: 'cancelled' } });
    return new Set(batches.flatMap((b) => b.userIds));
  }
}
