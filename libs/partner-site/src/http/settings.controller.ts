import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import { ChangePartnerRollbackWindow, DEFAULT_ROLLBACK_WINDOW_HOURS, MAX_ROLLBACK_WINDOW_HOURS, PartnerQueries } from '@deals/accounts';
import { ValidationFailed } from '@deals/kernel';
import type { FastifyReply } from 'fastify';
import type { SignedInMember } from './member-sessions';
import { field } from './form-fields';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { accountCaller, CurrentMember, issueTexts, SitePageErrors } from './site-request';

/** The partner's settings: how long a coupon's redemption may be rolled back. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner/settings')
export class SettingsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly partners: PartnerQueries,
    private readonly pages: SitePages,
  ) {}

  @Get()
  async page(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Query('saved') saved?: string,
  ) {
    return this.form(request, reply, member, { notice: saved ? 'Saved.' : undefined });
  }

  /** Blank: back to the default. */
  @Post()
  async save(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Body() body: unknown) {
    const typed = field(body, 'rollback_window_hours').trim();
    const hours = typed === '' ? null : /^\d{1,4}$/.test(typed) ? Number(typed) : Number.NaN;
    try {
      await this.commands.execute(new ChangePartnerRollbackWindow(member.accountId, hours, accountCaller(request, member)));
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      return this.form(request, reply, member, { errors: issueTexts(error), typed }, 422);
    }
    return reply.redirect('/partner/settings?saved=1', 303);
  }

  private async form(
    request: SiteRequest,
    reply: FastifyReply,
    member: SignedInMember,
    { notice, errors, typed }: { notice?: string; errors?: string[]; typed?: string },
    status = 200,
  ) {
    const settings = await this.partners.settings(member.accountId);
    const shown = typed ?? (settings.rollbackWindowIsDefault ? '' : String(settings.rollbackWindowHours));
    return this.pages.send(
      request,
      reply,
      'settings',
      {
        title: 'Settings',
        settings,
        shown,
        defaultHours: DEFAULT_ROLLBACK_WINDOW_HOURS,
        maxHours: MAX_ROLLBACK_WINDOW_HOURS,
        notice,
        errors,
      },
      status,
    );
  }
}
