import { requestDto } from '@deals/wire';
import { z } from 'zod';
import { DEFAULT_ROLLBACK_WINDOW_HOURS, MAX_ROLLBACK_WINDOW_HOURS } from '../domain/partner/partner.events';

const WINDOW_RULE = `must be a whole number of hours from 0 to ${MAX_ROLLBACK_WINDOW_HOURS}, or null for the default`;

/** PUT /v1/partner_settings. */
export const partnerSettingsBody = z
  .strictObject({
    redemption_rollback_window_hours: z
      .number({ error: (issue) => (issue.input === undefined ? 'is required' : WINDOW_RULE) })
      .int(WINDOW_RULE)
      .min(0, WINDOW_RULE)
      .max(MAX_ROLLBACK_WINDOW_HOURS, WINDOW_RULE)
      .nullable()
      .meta({
        description: `how long after its redemption a coupon's redemption may be rolled back, in hours; 0: never; null: the default (${DEFAULT_ROLLBACK_WINDOW_HOURS})`,
        example: 48,
      }),
  })
  .meta({ 'x-resource': 'partner_settings' });
export class PartnerSettingsBody extends requestDto(partnerSettingsBody) {}
