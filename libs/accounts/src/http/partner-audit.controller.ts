import { ApiAnswer, ApiRequest, AuditQuery, CalledBy } from '@deals/wire';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { PartnerAudit } from '../audit/partner-audit';

const partnerAuditEntry = z.object({
  position: z.string().meta({ description: 'position in the event log' }),
  occurredAt: z.string(),
  stream: z.string(),
  type: z.string().meta({ description: 'the event type, e.g. PartnerApiKeyIssued, PartnerApiKeyRevoked, PartnerPasswordRotated' }),
  actor: z.string().nullable().meta({ description: '`operator` (the CLI), `member:<id>` (a person on the partner site), `system`' }),
  requestId: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).meta({ description: "the event's facts, without hashes or sealed secrets" }),
});

export const PartnerAuditAnswer = z
  .object({ status: z.literal('success'), partner_id: z.string(), events: z.array(partnerAuditEntry) })
  .meta({
    example: {
      status: 'success',
      partner_id: 'p1',
      events: [
        {
          position: '00000000000000000042',
          occurredAt: '2026-06-15T12:00:00.000Z',
          stream: 'partner-p1',
          type: 'PartnerApiKeyRevoked',
          actor: 'operator',
          requestId: null,
          data: { partnerId: 'p1', keyId: 'k2', revokedAt: '2026-06-15T12:00:00.000Z' },
        },
      ],
    },
  });

/** A partner's credential and account history for auditor credentials: read only, never a secret or its hash. */
@ApiTags('audit')
@Controller('audit/partners')
export class PartnerAuditController {
  constructor(private readonly audit: PartnerAudit) {}

  @Get(':partner_id')
  @CalledBy('auditor')
  @ApiOperation({
    summary: "A partner's credential history",
    description:
      'For auditor credentials: every key issued, rotated, renamed and revoked, password rotation, budget change, and sign-in to the partner site, in log order with who did it; `as_of` an ISO 8601 instant.',
  })
  @ApiAnswer(PartnerAuditAnswer, { errors: [404, 422] })
  @ApiRequest({ query: AuditQuery })
  async history(@Param('partner_id') partnerId: string, @Query() query: AuditQuery) {
    return { status: 'success', partner_id: partnerId, events: await this.audit.history(partnerId, query.as_of) };
  }
}
