import { ValidationFailed } from '@deals/kernel';
import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ChangeMemberSession, invitationGone, SignInMember, SignUpMember } from '../commands/member.commands';
import { MIN_PASSWORD_LENGTH, normalEmail } from '../domain/member/member-rules';
import { field } from './form-fields';
import { MemberInvitations } from './member-invitations';
import { endedSessionCookie, FORM_COOKIE, sessionCookie, siteCookie, SiteRequest } from './site-http';
import { SitePages } from './site-pages';
import { issueTexts, memberCaller, SitePageErrors, visitorCaller } from './site-request';
import { SignInThrottle } from './sign-in-throttle';

/** Sign-up with an invitation, sign-in, sign-out, and the stylesheet. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class AccountController {
  constructor(
    private readonly commands: CommandBus,
    private readonly pages: SitePages,
    private readonly throttle: SignInThrottle,
    private readonly invitations: MemberInvitations,
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
    return this.pages.send(request, reply, 'sign-in', { title: 'Sign in', notice });
  }

  @Post('sign-in')
  async signIn(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const email = normalEmail(field(body, 'email'));
    const refused = (status: number, message: string) =>
      this.pages.send(request, reply, 'sign-in', { title: 'Sign in', email, errors: [message] }, status);
    const wait = await this.throttle.admit(request.ip, email);
    if (wait > 0) return this.tooSoon(reply, wait, refused);
    const outcome = await this.commands.execute(
      new SignInMember(email, field(body, 'password'), field(body, 'code').trim(), request.ip, visitorCaller(request)),
    );
    if (!outcome.signedIn) {
      const waitNow = await this.throttle.waitAfterFailure(request.ip, email);
      if (waitNow > 0) return this.tooSoon(reply, waitNow, refused);
      return refused(401, 'Wrong email, password or code.');
    }
    await this.throttle.succeeded(request.ip, email);
    // A new session id at each sign-in (never one a visitor had before), and the visitor's form cookie goes.
    void reply.header('set-cookie', sessionCookie(outcome.sessionId));
    void reply.header('set-cookie', siteCookie(FORM_COOKIE, '', 0));
    return reply.redirect('/partner/keys', 303);
  }

  @Get('sign-up')
  async signUpPage(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Query('token') token?: string) {
    const invitation = await this.invitations.open(token ?? '');
    if (!invitation) throw invitationGone();
    return this.pages.send(request, reply, 'sign-up', { title: 'Sign up', email: invitation.email, token, minLength: MIN_PASSWORD_LENGTH });
  }

  @Post('sign-up')
  async signUp(@Req() request: SiteRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const token = field(body, 'token');
    try {
      await this.commands.execute(
        new SignUpMember(token, field(body, 'password'), field(body, 'password_confirmation'), visitorCaller(request)),
      );
    } catch (error) {
      const invitation =
        error instanceof ValidationFailed && error.issues[0]?.resource === 'member' ? await this.invitations.open(token) : null;
      if (!invitation) throw error;
      const model = {
        title: 'Sign up',
        email: invitation.email,
        token,
        minLength: MIN_PASSWORD_LENGTH,
        errors: issueTexts(error as ValidationFailed),
      };
      return this.pages.send(request, reply, 'sign-up', model, 422);
    }
    return reply.redirect('/partner/sign-in?signed-up=1', 303);
  }

  @Post('sign-out')
  async signOut(@Req() request: SiteRequest, @Res() reply: FastifyReply) {
    const member = request.site!.member!;
    await this.commands.execute(new ChangeMemberSession('sign-out', member.memberId, member.sessionHash, memberCaller(request, member)));
    void reply.header('set-cookie', endedSessionCookie());
    return reply.redirect('/partner/sign-in', 303);
  }

  private tooSoon(reply: FastifyReply, waitMs: number, refused: (status: number, message: string) => unknown) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    void reply.header('retry-after', seconds);
    return refused(429, `Too many wrong sign-ins: wait ${seconds} seconds before trying again.`);
  }
}
