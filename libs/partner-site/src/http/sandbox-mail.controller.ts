import { isSandbox, NotFound } from '@deals/kernel';
import { SANDBOX_MAIL_KEPT_A_DAY, SANDBOX_MAIL_SENT_A_DAY, SandboxMailQueries } from '@deals/messaging';
import { humanUtc } from '@deals/wire';
import { Controller, Get, Param, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { CurrentMember, SitePageErrors } from './site-request';

const MAIL_PER_PAGE = 50;
const MAX_ID = 128;

/** The sandbox's outbox: the mail it kept instead of sending, newest first, and one email whole. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner/sandbox-mail')
export class SandboxMailPagesController {
  constructor(
    private readonly pages: SitePages,
    private readonly mail: SandboxMailQueries,
  ) {}

  @Get()
  async list(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Query('page') page?: string,
  ) {
    const model = { title: 'Sandbox mail', sentADay: SANDBOX_MAIL_SENT_A_DAY, keptADay: SANDBOX_MAIL_KEPT_A_DAY };
    if (!isSandbox(member.accountId)) return this.pages.send(request, reply, 'sandbox-mail', { ...model, live: true });
    const number = typeof page === 'string' && /^[1-9]\d{0,5}$/.test(page) ? Number(page) : 1;
    const found = await this.mail.list(member.accountId, (number - 1) * MAIL_PER_PAGE, MAIL_PER_PAGE + 1);
    const mail = found.slice(0, MAIL_PER_PAGE).map((m) => ({
      id: m._id,
      subject: m.subject,
      userId: m.userId,
      testClock: m.testClockId,
      keptAt: humanUtc(m.keptAt),
    }));
    return this.pages.send(request, reply, 'sandbox-mail', {
      ...model,
      mail,
      newer: number > 1 ? `/partner/sandbox-mail?page=${number - 1}` : null,
      older: found.length > MAIL_PER_PAGE ? `/partner/sandbox-mail?page=${number + 1}` : null,
    });
  }

  @Get(':mailId')
  async one(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('mailId') mailId: string,
  ) {
    const found = isSandbox(member.accountId) && mailId.length <= MAX_ID ? await this.mail.one(member.accountId, mailId) : null;
    if (!found) throw new NotFound('sandbox mail not found');
    const { mail, kept } = found;
    return this.pages.send(request, reply, 'sandbox-mail-one', {
      title: mail.subject,
      to: kept.to,
      userId: mail.userId,
      testClock: mail.testClockId,
      keptAt: humanUtc(mail.keptAt),
      messageId: mail.messageId,
      text: kept.text,
      html: kept.html,
    });
  }
}
