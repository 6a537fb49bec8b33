import { AccountQueries, AcknowledgeUserErasure, EraseUser, USER_ACCOUNTS, USER_ERASURES, UserErasure } from '@deals/accounts';
import { DomainError, ViewProgress, ViewStore } from '@deals/kernel';
import { humanUtc } from '@deals/wire';
import { Body, Controller, Get, Logger, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { field, shownBack } from './form-fields';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { accountCaller, CurrentMember, SitePageErrors } from './site-request';

/** Erasures a page lists of each kind. */
const SHOWN = 100;
/** Longer than any user id: such a field names no one (and is not looked up). */
const MAX_ID = 128;

const NOTICES: Record<string, string> = {
  erased: "The user's personal data is erased. Erase your own copies, then acknowledge it below.",
  acknowledged: 'Acknowledged: the erasure is recorded as done on your side too.',
};

const row = (erasure: UserErasure) => ({
  userId: erasure._id,
  erasedAt: humanUtc(erasure.erasedAt),
  by: erasure.by === 'operator' ? 'the service’s operator' : erasure.askedBy,
  acknowledgedAt: erasure.acknowledgedAt ? humanUtc(erasure.acknowledgedAt) : null,
  acknowledgedBy: erasure.acknowledgedBy,
});

/**
 * Personal data: erase a user's (as `DELETE /users/:user_id/personal_data` does), and the erasures
 * the partner has not acknowledged yet: each is a notice that the partner must erase the copies of
 * the user's data it keeps, and says so here once done.
 */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class PrivacyController {
  constructor(
    private readonly pages: SitePages,
    private readonly accounts: AccountQueries,
    private readonly commands: CommandBus,
    private readonly progress: ViewProgress,
    private readonly views: ViewStore,
  ) {}

  @Get('erasures')
  async list(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Query('done') done?: string,
  ) {
    const notice = typeof done === 'string' && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined;
    return this.page(request, reply, member, { notice, userId: '' });
  }

  @Post('erasures')
  async erase(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Body() body: unknown) {
    const userId = field(body, 'user_id').trim();
    const problems: string[] = [];
    if (!userId) problems.push('user id is required');
    else if (userId.length > MAX_ID) problems.push('user id names no user of yours');
    if (field(body, 'confirm') !== 'on') problems.push('confirm that the erasure cannot be undone');
    const form = { userId: shownBack(userId, MAX_ID) };
    if (problems.length) return this.page(request, reply, member, { ...form, errors: problems }, 422);
    let position;
    try {
      ({ position } = await this.commands.execute(new EraseUser(userId, accountCaller(request, member))));
    } catch (error) {
      if (!(error instanceof DomainError) || error.httpStatus !== 404) throw error;
      return this.page(request, reply, member, { ...form, errors: ['user id names no user of yours'] }, 404);
    }
    await this.progress.waitFor([USER_ACCOUNTS, USER_ERASURES], position);
    // Answered once no view file holds an earlier copy of what was erased (a file kept busy meanwhile
    // is not the erasure's failure: its copies go at its next checkpoint).
    await this.views.discardReplaced().catch((error: unknown) => new Logger('PersonalData').warn(String(error)));
    return reply.redirect('/partner/erasures?done=erased', 303);
  }

  @Post('erasures/:userId/acknowledge')
  async acknowledge(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('userId') userId: string,
  ) {
    const position = await this.commands.execute(new AcknowledgeUserErasure(userId.slice(0, MAX_ID), accountCaller(request, member)));
    await this.progress.waitFor([USER_ERASURES], position);
    return reply.redirect('/partner/erasures?done=acknowledged', 303);
  }

  private async page(
    request: SiteRequest,
    reply: FastifyReply,
    member: SignedInMember,
    model: { notice?: string; errors?: string[]; userId: string },
    status = 200,
  ) {
    const partnerId = member.accountId;
    const [pending, pendingCount, done] = await Promise.all([
      this.accounts.erasures(partnerId, false, SHOWN),
      this.accounts.countErasures(partnerId, false),
      this.accounts.erasures(partnerId, true, SHOWN),
    ]);
    return this.pages.send(
      request,
      reply,
      'erasures',
      { title: 'Personal data', ...model, pending: pending.map(row), pendingCount, acknowledged: done.map(row) },
      status,
    );
  }
}
