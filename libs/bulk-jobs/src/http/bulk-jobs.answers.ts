import { csvField } from '@deals/kernel';
import { z } from 'zod';
import { BULK_CHUNK_SIZE, MAX_BULK_ITEMS, MAX_OPEN_BULK_JOBS } from '../domain/bulk-job.decider';
import { BULK_ITEM_STATUSES, BULK_JOB_CANCELLATION_REASONS, BULK_JOB_KINDS } from '../domain/bulk-job.events';
import type { BulkJobItemView } from '../projections/bulk-job-items/bulk-job-items.projection';
import { BULK_JOB_STATUSES, type BulkJobView } from '../projections/bulk-jobs/bulk-jobs.projection';

const count = (description: string) => z.number().int().meta({ description });

export const bulkJobSchema = z
  .object({
    id: z.string(),
    kind: z.enum(BULK_JOB_KINDS),
    livemode: z.boolean().meta({ description: "false: a sandbox's job (test credentials)" }),
    status: z.enum(BULK_JOB_STATUSES).meta({
      description:
        "queued behind the partner's earlier open job, running, or completed (every item has its result); cancelling (cancelled while running: its chunk under way finishing), then cancelled (the items run before have results, the rest none)",
    }),
    item_count: count('items sent'),
    processed_count: count('items with a result so far'),
    succeeded_count: count('items done: the user made, the deal saved, the subscription made, the coupon redeemed'),
    matched_count: count('users items whose email a live user held already: that user, unchanged'),
    already_done_count: count('items whose reference an earlier job of the partner did'),
    failed_count: count('items refused, each with the error body its single call answers'),
    created_at: z.string().meta({ description: 'when it was accepted, ISO 8601 UTC' }),
    started_at: z.string().nullable().meta({ description: 'when its items began to run' }),
    completed_at: z.string().nullable().meta({ description: 'when it completed or, cancelled, stopped' }),
    cancelled_at: z.string().nullable().meta({ description: 'when it was cancelled' }),
    cancellation_reason: z
      .enum(BULK_JOB_CANCELLATION_REASONS)
      .nullable()
      // null among the values, as OpenAPI 3.0 asks of a nullable enum.
      .meta({
        enum: [...BULK_JOB_CANCELLATION_REASONS, null],
        description:
          'why it was cancelled: requested (the cancel call), credential_revoked (the API key that sent it was revoked); null when not cancelled',
      }),
    results_url: z.string().meta({ description: 'its items’ results, JSON pages' }),
    results_csv_url: z.string().meta({ description: 'its items’ results, CSV' }),
  })
  .meta({ id: 'BulkJob', description: "a partner's bulk job: items run in the background through the single calls" });

const limitsSchema = z
  .object({
    max_items: count('items a job takes at most'),
    max_open_jobs: count('jobs a partner has queued or running at once, at most'),
    items_per_result_write: count('items whose results are recorded together: progress moves by as many'),
  })
  .meta({ description: 'the bounds bulk jobs are held to' });

export const BULK_JOB_LIMITS = { max_items: MAX_BULK_ITEMS, max_open_jobs: MAX_OPEN_BULK_JOBS, items_per_result_write: BULK_CHUNK_SIZE };

export const bulkItemResultSchema = z
  .object({
    index: count('the item’s place in the job, from 0'),
    reference: z.string(),
    status: z.enum(BULK_ITEM_STATUSES),
    resource_id: z
      .string()
      .nullable()
      .meta({ description: 'the user, saved deal, subscription or coupon the item made, matched or acted on; null when it failed' }),
    done_by_job: z.string().nullable().meta({ description: 'already_done: the job that did it' }),
    http_status: z.number().int().nullable().meta({ description: 'failed: the status its single call answers' }),
    error: z
      .looseObject({ status: z.literal('error'), error_type: z.string(), error_msg: z.string() })
      .nullable()
      .meta({ description: 'failed: the error body its single call answers (the Error schema)' }),
  })
  .meta({ id: 'BulkJobItemResult', description: 'what became of one item of a bulk job' });

const exampleJob = {
  id: 'bj_Px3mR0aQ7vK2sL9dN1',
  kind: 'users',
  livemode: true,
  status: 'completed',
  item_count: 3,
  processed_count: 3,
  succeeded_count: 1,
  matched_count: 1,
  already_done_count: 0,
  failed_count: 1,
  created_at: '2026-11-29T10:00:00.000Z',
  started_at: '2026-11-29T10:00:00.020Z',
  completed_at: '2026-11-29T10:00:00.310Z',
  cancelled_at: null,
  cancellation_reason: null,
  results_url: 'https://api.example.com/v1/bulk_jobs/bj_Px3mR0aQ7vK2sL9dN1/results',
  results_csv_url: 'https://api.example.com/v1/bulk_jobs/bj_Px3mR0aQ7vK2sL9dN1/results.csv',
};

export const BulkJobAnswer = z
  .object({ status: z.literal('success'), bulk_job: bulkJobSchema, limits: limitsSchema })
  .meta({ example: { status: 'success', bulk_job: { ...exampleJob, status: 'queued', processed_count: 0 }, limits: BULK_JOB_LIMITS } });

const countAnswer = z.object({ status: z.literal('success'), count: z.number().int() });

export const BulkJobListAnswer = z
  .union([z.object({ status: z.literal('success'), bulk_jobs: z.array(bulkJobSchema), limits: limitsSchema }), countAnswer])
  .meta({ example: { status: 'success', bulk_jobs: [exampleJob], limits: BULK_JOB_LIMITS } });

export const BulkJobResultsAnswer = z
  .union([z.object({ status: z.literal('success'), bulk_job: bulkJobSchema, results: z.array(bulkItemResultSchema) }), countAnswer])
  .meta({
    example: {
      status: 'success',
      bulk_job: exampleJob,
      results: [
        {
          index: 0,
          reference: 'crm-1',
          status: 'succeeded',
          resource_id: '0b5e3c9a-51f2-8d1e-9a7b-2c4d6e8f0a1b',
          done_by_job: null,
          http_status: null,
          error: null,
        },
        {
          index: 1,
          reference: 'crm-2',
          status: 'failed',
          resource_id: null,
          done_by_job: null,
          http_status: 422,
          error: {
            status: 'error',
            error_type: 'validation_failed',
            error_msg: 'email is invalid',
            errors: [{ type: 'invalid', resource: 'user', field: 'email', message: 'is invalid' }],
          },
        },
      ],
    },
  });

export const toBulkJob = (job: BulkJobView, apiBaseUrl: string, livemode: boolean) => ({
  id: job._id,
  kind: job.kind,
  livemode,
  status: job.status,
  item_count: job.itemCount,
  processed_count: job.processed,
  succeeded_count: job.counts.succeeded,
  matched_count: job.counts.matched,
  already_done_count: job.counts.already_done,
  failed_count: job.counts.failed,
  created_at: job.acceptedAt,
  started_at: job.startedAt,
  completed_at: job.completedAt,
  cancelled_at: job.cancelledAt ?? null,
  cancellation_reason: job.cancelledAt ? (job.cancellationReason ?? 'requested') : null,
  results_url: `${apiBaseUrl}/v1/bulk_jobs/${job._id}/results`,
  results_csv_url: `${apiBaseUrl}/v1/bulk_jobs/${job._id}/results.csv`,
});

export const toBulkItemResult = (item: BulkJobItemView) => ({
  index: item.index,
  reference: item.reference,
  status: item.status,
  resource_id: item.resourceId,
  done_by_job: item.doneBy,
  http_status: item.error?.status ?? null,
  error: item.error?.body ?? null,
});

const CSV_HEADER = ['index', 'reference', 'status', 'resource_id', 'done_by_job', 'http_status', 'error_type', 'error_msg'];

/** A job's results as CSV, one line an item in the job's order, LF line ends; the error's type and message stand for its body. */
export function bulkResultsCsv(items: readonly BulkJobItemView[]): string {
  const rows = items.map((item) =>
    [
      item.index,
      // A reference of digits quoted too: text (its leading zeros kept), never a number to a spreadsheet.
      /^\d+$/.test(item.reference) ? `"${item.reference}"` : csvField(item.reference),
      item.status,
      item.resourceId,
      item.doneBy,
      item.error?.status ?? null,
      (item.error?.body.error_type as string | undefined) ?? null,
      (item.error?.body.error_msg as string | undefined) ?? null,
    ]
      .map((field, i) => (i === 1 ? String(field) : csvField(field as string | number | null)))
      .join(','),
  );
  return [CSV_HEADER.join(','), ...rows].map((row) => `${row}\n`).join('');
}
