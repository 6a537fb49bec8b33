import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import { Clock } from '@deals/kernel';
import { clientAddress } from '@deals/wire';
import type { FastifyReply } from 'fastify';
import { ChangeMemberSession } from '../commands/member.commands';
import { HasLiveInvitation, invitationGone, invitationOf, OpenInvitation, SignUpMember } from '../commands/member-invitation.commands';
import { SignInMember } from '../commands/member-sign-in.commands';
import { MemberIdOfEmail } from '../commands/member-ids';
import { SiteSecrets } from '../commands/site-secrets';
import { MAX_EMAIL_LENGTH, MIN_PASSWORD_LENGTH, normalEmail } from '../domain/member/member-rules';
import { deviceCookie, throttledAccount } from './device-cookies';
import { field } from './form-fields';
import { SecretCheckThrottle, TooSoon, tooSoonText } from './secret-check-throttle';
import { endedSessionCookie, FORM_COOKIE, MODE_COOKIE, sessionCookie, siteCookie } from './site-http';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { issueTexts, memberCaller, SitePageErrors, visitorCaller } from './site-request';

const EMAIL_TOO_LONG = `Email is not an email address: it has at most ${MAX_EMAIL_LENGTH} characters.`;

/** Sign-up with an invitation, sign-in, sign-out, and the stylesheet. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class AccountController {
  constructor(
    private readonly commands: CommandBus,
    private readonly pages: SitePages,
    private readonly throttle: SecretCheckThrottle,
    private readonly secrets: SiteSecrets,
    private readonly clock: Clock,
  ) {}

  @Get()
  home(@Res() reply: FastifyReply) {
    return reply.redirect('/partner/keys', 303);
  }

  @Get('site.css')
  stylesheet(@Res() reply: FastifyReply) {
    return reply.type('text/css; charset=utf-8').send(this.pages.stylesheet);
  }

  @Get('sign-in')
  signInPage(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Query('signed-up') signedUp?: string) {
    const notice = signedUp ? 'You are signed up. Sign in with your email and new password.' : undefined;
    return this.signInForm(request, reply, { notice });
  }

  /**
   * A sign-in counts against the address, and against the member's account, or, from a device the
   * member signed in on before (its device cookie), against that device alone: strangers' wrong
   * passwords make the account wait, never the member's own devices. A right one (re)makes the
   * device cookie.
   */
  @Post('sign-in')
  async signIn(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const given = field(body, 'email');
    const email = normalEmail(given);
    // No member has a longer one: refused as such, before any check, and not shown back.
    if (email.length > MAX_EMAIL_LENGTH) return this.signInForm(request, reply, { errors: [EMAIL_TOO_LONG] }, 422);
    const address = clientAddress(request);
    // From the spelling given: a member invited before addresses were folded is found under its lower case.
    const memberId = await this.commands.execute(new MemberIdOfEmail(given));
    const refused = (status: number, message: string) => this.signInForm(request, reply, { email, errors: [message] }, status);
    const outcome = await this.throttle.attempt(
      address,
      throttledAccount(this.secrets, request, memberId, this.clock.now()),
      () =>
        this.commands.execute(
          new SignInMember(memberId, field(body, 'password'), field(body, 'code').trim(), address, visitorCaller(request)),
        ),
      (result) => result.signedIn,
    );
    if (outcome instanceof TooSoon) return refused(429, tooSoonText(reply, outcome));
    if (!outcome.signedIn) return refused(401, 'Wrong email, password or code.');
    // A new session id at each sign-in (never one a visitor had before), and the visitor's form cookie goes.
    void reply.header('set-cookie', sessionCookie(outcome.sessionId));
    void reply.header('set-cookie', siteCookie(FORM_COOKIE, '', 0));
    void reply.header('set-cookie', deviceCookie(this.secrets, memberId, this.clock.now()));
    return reply.redirect('/partner/keys', 303);
  }

  /** A sign-up link's token is a secret checked as a password is: through the throttle, by the address and its invited member. */
  @Get('sign-up')
  async signUpPage(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Query('token') token = '') {
    const address = clientAddress(request);
    const opened = await this.throttle.attempt(
      address,
      await this.linkAccount(token),
      () => this.commands.execute(new OpenInvitation(token, address, visitorCaller(request))),
      (invitation) => invitation !== null,
    );
    if (opened instanceof TooSoon) return this.tooSoon(request, reply, opened);
    if (!opened) throw invitationGone();
    return this.pages.send(request, reply, 'sign-up', { title: 'Sign up', email: opened.email, token, minLength: MIN_PASSWORD_LENGTH });
  }

  @Post('sign-up')
  async signUp(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const token = field(body, 'token');
    const address = clientAddress(request);
    const signedUp = await this.throttle.attempt(
      address,
      await this.linkAccount(token),
      () =>
        this.commands.execute(
          new SignUpMember(token, field(body, 'password'), field(body, 'password_confirmation'), address, visitorCaller(request)),
        ),
      (result) => result.outcome !== 'dead-link',
    );
    if (signedUp instanceof TooSoon) return this.tooSoon(request, reply, signedUp);
    if (signedUp.outcome === 'dead-link') throw invitationGone();
    if (signedUp.outcome === 'invalid') {
      const model = { title: 'Sign up', email: signedUp.email, token, minLength: MIN_PASSWORD_LENGTH, errors: issueTexts(signedUp) };
      return this.pages.send(request, reply, 'sign-up', model, 422);
    }
    return reply.redirect('/partner/sign-in?signed-up=1', 303);
  }

  @Post('sign-out')
  async signOut(@Req() request: SiteRequest, @Res() reply: FastifyReply) {
    const member = request.site!.member!;
    await this.commands.execute(new ChangeMemberSession('sign-out', member.memberId, member.sessionHash, memberCaller(request, member)));
    void reply.header('set-cookie', [endedSessionCookie(), siteCookie(MODE_COOKIE, 'live', 0)]);
    return reply.redirect('/partner/sign-in', 303);
  }

  /**
   * The account a sign-up link counts against besides its address: the member it names while their
   * invitation is live, else none. A link naming a member who signed up is refused all the same, but
   * never counts against their sign-ins: anyone who knows an email can make such links.
   */
  private async linkAccount(token: string): Promise<string | null> {
    const named = invitationOf(token);
    return named && (await this.commands.execute(new HasLiveInvitation(named.memberId))) ? named.memberId : null;
  }

  /** The sign-in form, with what was typed and why it was refused. */
  private signInForm(
    request: SiteRequest,
    reply: FastifyReply,
    model: { email?: string; errors?: string[]; notice?: string },
    status = 200,
  ) {
    return this.pages.send(request, reply, 'sign-in', { title: 'Sign in', ...model, maxEmail: MAX_EMAIL_LENGTH }, status);
  }

  /** A sign-up link not checked: the address or its member must wait. */
  private tooSoon(request: SiteRequest, reply: FastifyReply, refused: TooSoon) {
    return this.pages.send(request, reply, 'message', { title: 'Refused', message: tooSoonText(reply, refused) }, 429);
  }
}
