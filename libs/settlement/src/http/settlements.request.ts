import { requestDto } from '@deals/wire';
import { z } from 'zod';

/** The most days one list of statements covers. */
export const MAX_RANGE_DAYS = 92;
const DAY_RULE = 'must be a UTC day, YYYY-MM-DD';

/** A real calendar day written YYYY-MM-DD. */
const day = (description: string, example: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : DAY_RULE) })
    .refine(
      (text) =>
        /^\d{4}-\d{2}-\d{2}$/.test(text) &&
        !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) &&
        new Date(`${text}T00:00:00Z`).toISOString().startsWith(text),
      DAY_RULE,
    )
    .meta({ description, example });

/** GET /v1/settlements/:date (and its CSV). */
export const settlementParams = z.object({ date: day('the UTC day', '2026-06-15') }).meta({ 'x-resource': 'settlement' });
export class SettlementParams extends requestDto(settlementParams) {}

/** GET /v1/settlements?from=&to=. */
export const settlementRangeQuery = z
  .object({
    from: day('the first day, included', '2026-06-01'),
    to: day('the last day, included', '2026-06-30'),
  })
  .meta({ 'x-resource': 'settlement' })
  .superRefine((range, ctx) => {
    const days = (Date.parse(range.to) - Date.parse(range.from)) / 86_400_000 + 1;
    if (days < 1) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
    else if (days > MAX_RANGE_DAYS)
      ctx.addIssue({ code: 'custom', path: ['to'], message: `must be at most ${MAX_RANGE_DAYS} days after from, counting both` });
  });
export class SettlementRangeQuery extends requestDto(settlementRangeQuery) {}
