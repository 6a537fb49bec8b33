import { PARTNER_API_KEYS, PartnerApiKeyView } from '@deals/accounts';
import { ViewProgress, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { BulkJobRunner } from '../commands/bulk-job-runner';
import { BULK_JOBS, BulkJobView, OPEN_BULK_JOB_STATUSES } from '../projections/bulk-jobs/bulk-jobs.projection';

/**
 * Once the process that keeps the views folds a key's revocation (a leak: `partners:revoke-key`, or
 * a rotation with `now`), the open bulk jobs that key sent are cancelled (`credential_revoked`):
 * what a key authorized ends with it. A job whose cancellation is missed here (a process stopped
 * between the commit and this) is cancelled by the runner before its next step.
 */
@Injectable()
export class CancelRevokedKeyJobs {
  private readonly logger = new Logger('BulkJobs');

  constructor(
    progress: ViewProgress,
    private readonly views: ViewStore,
    private readonly runner: BulkJobRunner,
  ) {
    progress.onCommitted(PARTNER_API_KEYS, (documents) => {
      for (const key of documents as PartnerApiKeyView[])
        if (key.revokedAt)
          this.cancelJobsOf(key.partnerId, key.keyId).catch((error: unknown) =>
            this.logger.warn(`the bulk jobs of a revoked key are cancelled at their next step instead: ${String(error)}`),
          );
    });
  }

  /** Cancels the partner's open jobs the key sent. */
  async cancelJobsOf(partnerId: string, keyId: string): Promise<void> {
    const open = await this.views.find<BulkJobView>(BULK_JOBS, { partnerId, keyId, status: { $in: [...OPEN_BULK_JOB_STATUSES] } });
    for (const job of open) await this.runner.revokedKeyCancels(job._id, partnerId);
  }
}
