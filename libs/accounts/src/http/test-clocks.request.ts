import { isoInstant } from '@deals/kernel';
import { requestDto } from '@deals/wire';
import { z } from 'zod';

const INSTANT = 'must be a date and time in ISO 8601 with a zone (2026-06-15T12:00:00Z)';

/** An instant a clock stands at: ISO 8601 with a zone, between the years 2000 and 2100. */
const instant = (description: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : INSTANT) })
    .transform((text, ctx) => {
      // A day the calendar lacks (2027-02-30) is refused, not rolled over into the next month.
      const at = text.length <= 40 ? (isoInstant(text)?.getTime() ?? NaN) : NaN;
      if (Number.isFinite(at) && at >= Date.UTC(2000, 0, 1) && at < Date.UTC(2100, 0, 1)) return new Date(at);
      ctx.addIssue({ code: 'custom', message: INSTANT });
      return z.NEVER;
    })
    .meta({ type: 'string', format: 'date-time', description, example: '2026-06-15T12:00:00Z' });

/** POST /v1/test_clocks. */
export const createTestClockBody = z
  .strictObject({
    frozen_time: instant('the instant the clock stands at until it is advanced'),
    name: z
      .string({ error: 'must be a string' })
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .refine((text) => !/[\p{Cc}\p{Cf}]/u.test(text), 'must not hold control or format characters')
      .optional()
      .meta({ description: 'what the clock is for', example: 'renewal tests' }),
  })
  .meta({ 'x-resource': 'test_clock' });
export class CreateTestClockBody extends requestDto(createTestClockBody) {}

/** POST /v1/test_clocks/:test_clock_id/advance. */
export const advanceTestClockBody = z
  .strictObject({ frozen_time: instant('where the clock moves to: after its time, at most two years on') })
  .meta({ 'x-resource': 'test_clock' });
export class AdvanceTestClockBody extends requestDto(advanceTestClockBody) {}

export const testClockParams = z
  .object({
    test_clock_id: z
      .string()
      .min(1, 'is required')
      .max(64, 'must be at most 64 characters')
      .meta({ description: 'the test clock', example: 'clock_P7P72Z9DDJ3Ix1zDc4n' }),
  })
  .meta({ 'x-resource': 'test_clock' });
export class TestClockParams extends requestDto(testClockParams) {}
