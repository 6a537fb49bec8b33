import { ValidationFailed } from '@deals/kernel';
import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { toDataURL } from 'qrcode';
import { ChangeMemberSession, EnrolMemberTotp, newTotpSecret, totpUri } from '../commands/member.commands';
import { seal, SiteSecrets, unseal } from '../commands/site-secrets';
import type { SignedInMember } from './member-sessions';
import { field } from './form-fields';
import { endedSessionCookie, SiteRequest } from './site-http';
import { SitePages } from './site-pages';
import { CurrentMember, issueTexts, memberCaller, SitePageErrors } from './site-request';

/** What a TOTP secret being set up is sealed to, in its form: the session that asked for it. */
const setupContext = (member: SignedInMember) => `totp-setup:${member.sessionHash}`;

/** Two-step sign-in (TOTP) and signing out everywhere. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner/security')
export class SecurityController {
  constructor(
    private readonly commands: CommandBus,
    private readonly pages: SitePages,
    private readonly secrets: SiteSecrets,
  ) {}

  @Get()
  page(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Query('done') done?: string) {
    const notice = done === 'totp' ? 'Two-step sign-in is on.' : undefined;
    return this.pages.send(request, reply, 'security', { title: 'Sign-in and security', notice });
  }

  @Post('totp/start')
  async start(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    return this.setupPage(request, reply, member, newTotpSecret(), 200);
  }

  @Post('totp')
  async enrol(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Body() body: unknown) {
    const secret = unseal(this.secrets.sealingKey, field(body, 'sealed'), setupContext(member));
    if (secret === null) return this.start(request, reply, member);
    try {
      const code = field(body, 'code').trim();
      await this.commands.execute(
        new EnrolMemberTotp(member.memberId, secret, code, field(body, 'password'), memberCaller(request, member)),
      );
    } catch (error) {
      if (!(error instanceof ValidationFailed) || !['code', 'password'].includes(error.issues[0]?.field ?? '')) throw error;
      return this.setupPage(request, reply, member, secret, 422, issueTexts(error));
    }
    return reply.redirect('/partner/security?done=totp', 303);
  }

  @Post('sign-out-everywhere')
  async signOutEverywhere(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    await this.commands.execute(
      new ChangeMemberSession('sign-out-everywhere', member.memberId, member.sessionHash, memberCaller(request, member)),
    );
    void reply.header('set-cookie', endedSessionCookie());
    return reply.redirect('/partner/sign-in', 303);
  }

  /** The set-up form: the secret as a QR code and as text, and sealed (to this session) in the form for its confirmation. */
  private async setupPage(
    request: SiteRequest,
    reply: FastifyReply,
    member: SignedInMember,
    secret: string,
    status: number,
    errors?: string[],
  ) {
    const uri = totpUri(member.email, secret);
    const setup = {
      qr: await toDataURL(uri, { margin: 1, width: 200 }),
      secret,
      sealed: seal(this.secrets.sealingKey, secret, setupContext(member)),
    };
    return this.pages.send(request, reply, 'security', { title: 'Sign-in and security', setup, errors }, status);
  }
}
