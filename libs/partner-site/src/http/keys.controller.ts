import {
  IssuePartnerApiKey,
  PARTNER_ACCOUNTS,
  partnerApiKeys,
  RenamePartnerApiKey,
  RevokePartnerApiKey,
  RotatePartnerApiKey,
  RotatePartnerPassword,
} from '@deals/accounts';
import { Clock, NotFound, ViewDocument, ViewStore } from '@deals/kernel';
import { humanUtc, UsageMeter } from '@deals/wire';
import { Body, Controller, Get, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { field } from './form-fields';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { accountCaller, CurrentMember, SitePageErrors } from './site-request';

/** How long a replaced credential keeps working: a day for an orderly change, not at all for a compromised one. */
const GRACE_MS: Record<string, number> = { '24h': 24 * 3_600_000, now: 0 };

/** The partner's API keys (issue, rotate, revoke, rename) and its v3 password (rotate); a new secret is shown once. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class KeysController {
  constructor(
    private readonly commands: CommandBus,
    private readonly pages: SitePages,
    private readonly views: ViewStore,
    private readonly clock: Clock,
    private readonly usage: UsageMeter,
  ) {}

  @Get('keys')
  async keys(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    const [found, usage] = await Promise.all([
      partnerApiKeys(this.views, member.accountId, this.clock.now()),
      this.usage.usageOf(request.site!.partner!),
    ]);
    const lastUsed = usage.credentialsLastUsed;
    const keys = found.map((k) => ({
      ...k,
      issuedAt: k.issuedAt ? humanUtc(k.issuedAt) : 'at registration',
      expiresAt: k.expiresAt && humanUtc(k.expiresAt),
      revokedAt: k.revokedAt && humanUtc(k.revokedAt),
      lastUsed: Object.hasOwn(lastUsed, k.keyId) ? humanUtc(new Date(lastUsed[k.keyId]).toISOString()) : 'never',
      working: k.state === 'live' || k.state === 'expiring',
    }));
    return this.pages.send(request, reply, 'keys', { title: 'API keys', keys });
  }

  @Post('keys')
  async issue(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Body() body: unknown) {
    const name = field(body, 'name').trim() || undefined;
    const issued = await this.commands.execute(new IssuePartnerApiKey(member.accountId, name, accountCaller(request, member)));
    const model = { title: 'New API key', apiKey: issued.apiKey, name: name ?? issued.prefix };
    return this.pages.sendSecretOnce(request, reply, 'key-issued', model, { ...model, apiKey: null, shownBefore: true });
  }

  @Post('keys/:keyId/rotate')
  async rotate(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('keyId') keyId: string,
    @Body() body: unknown,
  ) {
    const oldExpiresAt = this.graceEnd(field(body, 'grace'));
    const rotated = await this.commands.execute(
      new RotatePartnerApiKey(member.accountId, keyId, oldExpiresAt, accountCaller(request, member)),
    );
    const model = {
      title: 'New API key',
      apiKey: rotated.apiKey,
      name: rotated.prefix,
      oldKeyId: rotated.oldKeyId,
      oldExpiresAt: rotated.oldExpiresAt && humanUtc(rotated.oldExpiresAt),
      oldExpired: rotated.oldExpiresAt !== null && Date.parse(rotated.oldExpiresAt) <= this.clock.now().getTime(),
    };
    return this.pages.sendSecretOnce(request, reply, 'key-issued', model, { ...model, apiKey: null, shownBefore: true });
  }

  @Post('keys/:keyId/revoke')
  async revoke(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('keyId') keyId: string,
  ) {
    await this.commands.execute(new RevokePartnerApiKey(member.accountId, keyId, accountCaller(request, member)));
    return reply.redirect('/partner/keys', 303);
  }

  @Post('keys/:keyId/name')
  async rename(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('keyId') keyId: string,
    @Body() body: unknown,
  ) {
    await this.commands.execute(
      new RenamePartnerApiKey(member.accountId, keyId, field(body, 'name').trim(), accountCaller(request, member)),
    );
    return reply.redirect('/partner/keys', 303);
  }

  @Get('password')
  async password(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    const account = await this.views.findById<ViewDocument & { username: string }>(PARTNER_ACCOUNTS, member.accountId);
    if (!account) throw new NotFound('partner not found');
    return this.pages.send(request, reply, 'password', { title: 'v3 password', username: account.username });
  }

  @Post('password/rotate')
  async rotatePassword(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Body() body: unknown,
  ) {
    const oldExpiresAt = this.graceEnd(field(body, 'grace'));
    const rotated = await this.commands.execute(new RotatePartnerPassword(member.accountId, oldExpiresAt, accountCaller(request, member)));
    const model = {
      title: 'New v3 password',
      username: rotated.username,
      password: rotated.password,
      oldExpiresAt: humanUtc(rotated.previousExpiresAt),
      oldExpired: Date.parse(rotated.previousExpiresAt) <= this.clock.now().getTime(),
    };
    return this.pages.sendSecretOnce(request, reply, 'password-issued', model, { ...model, password: null, shownBefore: true });
  }

  private graceEnd(grace: string): string {
    return new Date(this.clock.now().getTime() + (Object.hasOwn(GRACE_MS, grace) ? GRACE_MS[grace] : GRACE_MS['24h'])).toISOString();
  }
}
