import { OpenSandbox, PARTNER_ACCOUNTS } from '@deals/accounts';
import { sandboxOf, ViewDocument, ViewStore } from '@deals/kernel';
import { Body, Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { field } from './form-fields';
import type { SignedInMember } from './member-sessions';
import { MODE_COOKIE, SITE_PREFIX, siteCookie } from './site-http';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { CurrentMember, memberCaller, SitePageErrors } from './site-request';

/** Test mode lasts as long as a session may. */
const MODE_COOKIE_LIFETIME_S = 12 * 3600;

/** Where a switch of mode returns to: a page of the site the form came from, else the keys. */
function pageBack(back: string): string {
  return /^\/partner(\/[A-Za-z0-9_./-]*)?$/.test(back) && !back.includes('//') && !back.includes('..') ? back : `${SITE_PREFIX}/keys`;
}

/**
 * Test mode: the member's pages show and change their partner's sandbox (its keys, password,
 * webhooks, events, statements, settings) instead of the live account, until they leave it.
 */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class ModeController {
  constructor(
    private readonly commands: CommandBus,
    private readonly pages: SitePages,
    private readonly views: ViewStore,
  ) {}

  @Post('mode')
  async switch(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Body() body: unknown) {
    const back = pageBack(field(body, 'back'));
    if (field(body, 'mode') !== 'test') {
      void reply.header('set-cookie', siteCookie(MODE_COOKIE, 'live', 0));
      return reply.redirect(back, 303);
    }
    if (!(await this.sandboxOpen(member))) return reply.redirect(`${SITE_PREFIX}/sandbox`, 303);
    void reply.header('set-cookie', siteCookie(MODE_COOKIE, 'test', MODE_COOKIE_LIFETIME_S));
    return reply.redirect(back, 303);
  }

  /** What test mode is, and for a partner without a sandbox the button that opens it. */
  @Get('sandbox')
  async sandbox(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    return this.pages.send(request, reply, 'sandbox', { title: 'Test mode', open: await this.sandboxOpen(member) });
  }

  @Post('sandbox')
  async open(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    const opened = await this.commands.execute(new OpenSandbox(member.partnerId, memberCaller(request, member)));
    void reply.header('set-cookie', siteCookie(MODE_COOKIE, 'test', MODE_COOKIE_LIFETIME_S));
    const model = { title: 'Your sandbox is open', apiKey: opened.apiKey, username: opened.username, password: opened.password };
    return this.pages.sendSecretOnce(request, reply, 'sandbox-opened', model, {
      ...model,
      apiKey: null,
      password: null,
      shownBefore: true,
    });
  }

  private async sandboxOpen(member: SignedInMember): Promise<boolean> {
    return (await this.views.findById<ViewDocument>(PARTNER_ACCOUNTS, sandboxOf(member.partnerId))) !== null;
  }
}
