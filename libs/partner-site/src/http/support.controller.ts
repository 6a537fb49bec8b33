import { RequestLimits } from '@deals/wire';
import { Controller, Get, Optional, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-http';
import { SitePages } from './site-pages';
import { CurrentMember, SitePageErrors } from './site-request';
import { SupportLookup } from './support-lookup';

/** The partner's request usage, its email batches, and the look-up of its purchases and coupons. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class SupportController {
  constructor(
    private readonly pages: SitePages,
    private readonly lookup: SupportLookup,
    @Optional() private readonly limits?: RequestLimits,
  ) {}

  @Get('usage')
  async usage(@Req() request: SiteRequest, @Res() reply: FastifyReply) {
    const minute = this.limits ? await this.limits.partnerMinute(request.site!.partner!) : null;
    const shown = minute && { ...minute, resetsIn: Math.ceil(minute.resetsInMs / 1000) };
    return this.pages.send(request, reply, 'usage', { title: 'Usage', minute: shown, today: null });
  }

  @Get('batches')
  async batches(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    return this.pages.send(request, reply, 'batches', {
      title: 'Email batches',
      batches: await this.lookup.recentBatches(member.partnerId),
    });
  }

  @Get('lookup')
  async find(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Query('q') q?: string) {
    const query = typeof q === 'string' ? q : '';
    if (!query) return this.pages.send(request, reply, 'lookup', { title: 'Look-up', searched: false });
    const result = await this.lookup.find(member.partnerId, query);
    return this.pages.send(request, reply, 'lookup', { title: 'Look-up', searched: true, query, ...result }, result.found ? 200 : 404);
  }
}
