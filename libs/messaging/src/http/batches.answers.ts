import { z } from 'zod';
import type { BatchDetails } from '../projections/batch-details/batch-details.projection';

/** A targeted-email batch as the API answers it. */
export const batchSchema = z
  .object({
    id: z.string(),
    deal_id: z.string(),
    user_ids: z
      .array(z.string())
      .meta({ description: 'the users kept: unknown ones and those already in a batch of that day are dropped' }),
    mode: z.enum(['suppress', 'augment']),
    send_at: z.string().meta({ description: 'ISO 8601 UTC' }),
    status: z.enum(['pending', 'processed', 'failed', 'cancelled']),
  })
  .meta({
    id: 'TargetedEmailBatch',
    description: 'a targeted-email batch',
    example: {
      id: 'b7Kq2',
      deal_id: 'chicago-spa-day',
      user_ids: ['u4Kd8', 'u9Tz1'],
      mode: 'suppress',
      send_at: '2026-06-16T09:00:00Z',
      status: 'pending',
    },
  });

export const toBatch = (view: BatchDetails) => ({
  id: view._id,
  deal_id: view.dealId,
  user_ids: view.userIds,
  mode: view.mode,
  send_at: view.sendAt.replace(/\.000Z$/, 'Z'),
  status: view.status,
});

const example = (batchSchema.meta() as { example: Record<string, unknown> }).example;
export const BatchAnswer = z
  .object({ status: z.literal('success'), batch: batchSchema })
  .meta({ example: { status: 'success', batch: example } });
export const CancelledBatchAnswer = z
  .object({ status: z.literal('success'), batch: batchSchema })
  .meta({ example: { status: 'success', batch: { ...example, status: 'cancelled' } } });
