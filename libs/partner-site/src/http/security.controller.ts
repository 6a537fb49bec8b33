import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import { Clock } from '@deals/kernel';
import { clientAddress } from '@deals/wire';
import type { FastifyReply } from 'fastify';
import { toString as qrText } from 'qrcode';
import { ChangeMemberSession } from '../commands/member.commands';
import { EnrolMemberTotp, newTotpSecret, totpUri } from '../commands/member-sign-in.commands';
import { seal, SiteSecrets, unseal } from '../commands/site-secrets';
import { throttledAccount } from './device-cookies';
import type { SignedInMember } from './member-sessions';
import { field } from './form-fields';
import { SecretCheckThrottle, TooSoon, tooSoonText } from './secret-check-throttle';
import { endedSessionCookie } from './site-http';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { CurrentMember, memberCaller, SitePageErrors } from './site-request';

/** What a TOTP secret being set up is sealed to, in its form: the session that asked for it. */
const setupContext = (member: SignedInMember) => `totp-setup:${member.sessionHash}`;

/** The set-up's QR code as an SVG image: every answer of the form draws it, refusals too, and a PNG's encoding is most of a page's time. */
const qrImage = async (uri: string) =>
  `data:image/svg+xml;base64,${Buffer.from(await qrText(uri, { type: 'svg', margin: 1, width: 200 })).toString('base64')}`;

/** A wrong password and a wrong code are answered alike: the answer is no oracle for the password. */
const NOT_ACCEPTED = 'Your password or the code was not accepted: check both and try again.';

/** What a repeat of a set-up form says in place of its key (shown once). */
const SETUP_SHOWN_BEFORE =
  'A two-step sign-in key was shown when this form was first sent; it is not shown again. Start the set-up again for a new key.';

/** Two-step sign-in (TOTP) and signing out everywhere. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner/security')
export class SecurityController {
  constructor(
    private readonly commands: CommandBus,
    private readonly pages: SitePages,
    private readonly secrets: SiteSecrets,
    private readonly throttle: SecretCheckThrottle,
    private readonly clock: Clock,
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

  /** The password asked again goes through the throttle of the member's sign-ins, and counts with them (a known device's with that device's). */
  @Post('totp')
  async enrol(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Body() body: unknown) {
    if (member.totpEnrolled) return reply.redirect('/partner/security', 303);
    const sealed = field(body, 'sealed');
    const secret = unseal(this.secrets.sealingKey, sealed, setupContext(member));
    if (secret === null) return this.start(request, reply, member);
    const address = clientAddress(request);
    const outcome = await this.throttle.attempt(
      address,
      throttledAccount(this.secrets, request, member.memberId, this.clock.now()),
      () =>
        this.commands.execute(
          new EnrolMemberTotp(
            member.memberId,
            secret,
            field(body, 'code').trim(),
            field(body, 'password'),
            address,
            memberCaller(request, member),
          ),
        ),
      (result) => result.enrolled,
    );
    // The form comes back as it was sent (the same sealed secret): a wrong password and a wrong code get the very same page.
    if (outcome instanceof TooSoon) return this.setupPage(request, reply, member, secret, 429, [tooSoonText(reply, outcome)], sealed);
    if (!outcome.enrolled) return this.setupPage(request, reply, member, secret, 422, [NOT_ACCEPTED], sealed);
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
    sealed = seal(this.secrets.sealingKey, secret, setupContext(member)),
  ) {
    const uri = totpUri(member.email, secret);
    const setup = { qr: await qrImage(uri), secret, sealed };
    const title = 'Sign-in and security';
    return this.pages.sendSecretOnce(request, reply, 'security', { title, setup, errors }, { title, notice: SETUP_SHOWN_BEFORE }, status);
  }
}
