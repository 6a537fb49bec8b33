import { accountOf, NotFound } from '@deals/kernel';
import { ApiAnswer, ApiRequest, CalledBy, Caller, CurrentCaller } from '@deals/wire';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { SANDBOX_MAIL_KEPT_A_DAY, SANDBOX_MAIL_SENT_A_DAY } from '../domain/sandbox-mail/sandbox-mail.decider';
import { SandboxMailQueries } from '../queries/sandbox-mail.queries';
import { SandboxMailAnswer, SandboxMailListAnswer, toSandboxMail, toSandboxMailSummary } from './sandbox-mail.answers';
import { SandboxMailListQuery, SandboxMailParams } from './sandbox-mail.request';

/** The mail a sandbox kept instead of sending: its outbox, read with test credentials. */
@ApiTags('sandbox')
@Controller('v1/sandbox_mail')
export class SandboxMailController {
  constructor(private readonly mail: SandboxMailQueries) {}

  @Get()
  @CalledBy('sandbox')
  @ApiOperation({
    summary: "A sandbox's kept mail",
    description:
      'Newest first; `count`, `per_page`, `page`. The email a sandbox (or one of its test clocks) would have sent its users: a sandbox emails ' +
      `for real only an address of the partner's own people (the partner site's members), at most ${SANDBOX_MAIL_SENT_A_DAY} a day, and keeps ` +
      `the rest here, at most ${SANDBOX_MAIL_KEPT_A_DAY} a day (UTC). Test credentials only.`,
  })
  @ApiAnswer(SandboxMailListAnswer, { errors: [403, 422] })
  @ApiRequest({ query: SandboxMailListQuery })
  async list(@Query() query: SandboxMailListQuery, @CurrentCaller() caller: Caller) {
    const sandboxId = accountOf(caller.partnerId);
    const { paging } = query;
    if (paging.count) return { status: 'success', count: await this.mail.count(sandboxId) };
    const page = await this.mail.list(sandboxId, paging.skip, paging.perPage);
    return { status: 'success', sandbox_mail: page.map(toSandboxMailSummary) };
  }

  @Get(':mail_id')
  @CalledBy('sandbox')
  @ApiOperation({
    summary: 'A kept email, whole',
    description: 'Its address and bodies as they would have been sent (null once the user was erased). Test credentials only.',
  })
  @ApiAnswer(SandboxMailAnswer, { errors: [403, 404] })
  @ApiRequest({ params: SandboxMailParams })
  async one(@Param() params: SandboxMailParams, @CurrentCaller() caller: Caller) {
    const found = await this.mail.one(accountOf(caller.partnerId), params.mail_id);
    if (!found) throw new NotFound('sandbox mail not found');
    return { status: 'success', sandbox_mail: toSandboxMail(found.mail, found.kept) };
  }
}
