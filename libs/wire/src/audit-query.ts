import { isoInstant } from '@deals/kernel';
import { z } from 'zod';
import { requestDto } from './request-dto';

/** The audit's `as_of`: an ISO 8601 instant (date, time and `Z` or an offset), read as a Date. */
export const auditQuery = z
  .object({
    as_of: z
      .string({ error: 'must be an ISO 8601 instant' })
      .optional()
      .transform((text, ctx) => {
        if (text === undefined) return null;
        const cut = isoInstant(text);
        if (!cut) {
          ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 instant' });
          return z.NEVER;
        }
        return cut;
      })
      .meta({ description: 'the history as it stood at this instant', example: '2026-06-15T12:00:00Z' }),
  })
  .meta({ 'x-resource': 'request' });
export class AuditQuery extends requestDto(auditQuery) {}
