import { UsageMeter } from '@deals/wire';
import { Controller, Get, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { shownBack } from './form-fields';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { CurrentMember, SitePageErrors } from './site-request';
import { MAX_QUERY_LENGTH, SupportLookup } from './support-lookup';

/** The partner's request usage, its email batches, and the look-up of its purchases and coupons. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class SupportController {
  constructor(
    private readonly pages: SitePages,
    private readonly lookup: SupportLookup,
    private readonly meter: UsageMeter,
  ) {}

  @Get('usage')
  async usage(@Req() request: SiteRequest, @Res() reply: FastifyReply) {
    const usage = await this.meter.usageOf(request.site!.partner!);
    const minute = usage.thisMinute && { ...usage.thisMinute, resetsIn: Math.ceil(usage.thisMinute.resetsInMs / 1000) };
    const byStatus = (counts: Record<string, number>) =>
      Object.entries(counts)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([status, count]) => ({ status, count }));
    const days = usage.days.map((day) => ({
      day: day.day,
      total: Object.values(day.byStatus).reduce((a, b) => a + b, 0),
      statuses: byStatus(day.byStatus),
    }));
    return this.pages.send(request, reply, 'usage', {
      title: 'Usage',
      minute,
      today: byStatus(usage.today.byStatus),
      days: days.reverse(),
    });
  }

  @Get('batches')
  async batches(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    return this.pages.send(request, reply, 'batches', {
      title: 'Email batches',
      batches: await this.lookup.recentBatches(member.accountId),
    });
  }

  @Get('lookup')
  async find(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Query('q') q?: string) {
    const query = typeof q === 'string' ? q : '';
    if (!query) return this.pages.send(request, reply, 'lookup', { title: 'Look-up', searched: false });
    const result = await this.lookup.find(member.accountId, query);
    const shown = shownBack(query, MAX_QUERY_LENGTH);
    return this.pages.send(
      request,
      reply,
      'lookup',
      { title: 'Look-up', searched: true, query: shown, ...result },
      result.found ? 200 : 404,
    );
  }
}
