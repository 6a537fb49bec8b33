import { findOfPartner, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { BULK_JOB_ITEMS, BulkJobItemView } from '../projections/bulk-job-items/bulk-job-items.projection';
import { BULK_JOBS, BulkJobView } from '../projections/bulk-jobs/bulk-jobs.projection';

/** Items read a page at a time for the CSV. */
const CSV_PAGE = 1000;

/** Reads of a partner's bulk jobs and their items' results; another partner's job does not exist. */
@Injectable()
export class BulkJobQueries {
  constructor(private readonly views: ViewStore) {}

  async job(partnerId: string, jobId: string): Promise<BulkJobView | null> {
    return findOfPartner<BulkJobView>(this.views, BULK_JOBS, jobId, partnerId);
  }

  /** The partner's jobs, newest first. */
  jobs(partnerId: string, skip: number, limit: number): Promise<BulkJobView[]> {
    return this.views.find<BulkJobView>(BULK_JOBS, { partnerId }, { sort: { acceptedAt: -1, _id: -1 }, skip, limit });
  }

  countJobs(partnerId: string): Promise<number> {
    return this.views.count(BULK_JOBS, { partnerId });
  }

  /** A page of the job's results, in the job's order. */
  results(jobId: string, skip: number, limit: number): Promise<BulkJobItemView[]> {
    return this.views.find<BulkJobItemView>(BULK_JOB_ITEMS, { jobId }, { sort: { _id: 1 }, skip, limit });
  }

  /** Every result of the job so far, in the job's order. */
  async allResults(jobId: string): Promise<BulkJobItemView[]> {
    const all: BulkJobItemView[] = [];
    for (let after = ''; ;) {
      const page = await this.views.find<BulkJobItemView>(
        BULK_JOB_ITEMS,
        { jobId, _id: { $gt: after } },
        { sort: { _id: 1 }, limit: CSV_PAGE },
      );
      all.push(...page);
      if (page.length < CSV_PAGE) return all;
      after = page[page.length - 1]._id;
    }
  }
}
