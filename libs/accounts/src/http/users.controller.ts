import { NotFound, ValidationFailed, ViewProgress } from '@deals/kernel';
import { ApiAnswer, ApiRequest, ByPartner, Caller, CurrentCaller, flagValue, TokenResource } from '@deals/wire';
import { Body, Controller, Get, Header, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation } from '@nestjs/swagger';
import { AccountsSettings } from '../commands/accounts-settings';
import { IssueAccessToken, RegisterUser, UpdateUser, UpdateUserByEmail, UserInput } from '../commands/user.commands';
import { USER_ACCOUNTS } from '../projections/user-accounts/user-accounts.projection';
import { ACCESS_TOKENS } from '../projections/access-tokens/access-tokens.projection';
import { AccountQueries } from '../queries/account.queries';
import { AccessTokenAnswer, toUser } from './account.responses';
import { IssueAccessTokenBody } from './access-token.request';

const PASSWORD_FIELDS = ['pass', 'password', 'pass_confirmation', 'password_confirmation'];

const fields = (body: unknown): UserInput => (body && typeof body === 'object' && !Array.isArray(body) ? (body as UserInput) : {});

/** Part 4.9 and 4.15: users and their temporary access tokens. */
@Controller()
export class UsersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
    private readonly settings: AccountsSettings,
  ) {}

  @Post('users')
  @HttpCode(200)
  async create(@Body() body: unknown, @CurrentCaller() caller: Caller, @ByPartner() byPartner: boolean) {
    const { userId, position } = await this.commands.execute(new RegisterUser(fields(body), byPartner, caller));
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success', user_id: userId };
  }

  @Get('users/:user_id')
  @TokenResource('user')
  async one(@Param('user_id') userId: string, @CurrentCaller() caller: Caller) {
    return { status: 'success', user: await this.userBody(caller.partnerId, userId) };
  }

  @Put('users/:user_id')
  @TokenResource('user')
  async update(@Param('user_id') userId: string, @Body() body: unknown, @CurrentCaller() caller: Caller, @ByPartner() byPartner: boolean) {
    const { position } = await this.commands.execute(new UpdateUser(userId, fields(body), byPartner, caller));
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success', user: await this.userBody(caller.partnerId, userId, true) };
  }

  @Put('api/v1/users/:email/update_by_email')
  async updateByEmail(
    @Param('email') email: string,
    @Query('overwrite_token') overwrite: unknown,
    @Body() body: unknown,
    @CurrentCaller() caller: Caller,
  ) {
    // Part 4.9 lists no password for this call (it may create the user): a password is set by
    // PUT /users/:user_id, with its confirmation; sent here, it is refused rather than taken.
    const passwords = PASSWORD_FIELDS.filter((field) => (body as Record<string, unknown> | null)?.[field] !== undefined);
    if (passwords.length)
      throw new ValidationFailed(
        passwords.map((field) => ({
          type: 'invalid' as const,
          resource: 'user',
          field,
          message: 'is not taken by update_by_email: set a password with PUT /users/:user_id',
        })),
      );
    const { userId, position } = await this.commands.execute(
      new UpdateUserByEmail(email, fields(body), flagValue(overwrite) === true, caller),
    );
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success', user: await this.userBody(caller.partnerId, userId, true) };
  }

  /** Deprecated in the interface (part 4.15); served while it exists, answered with a Deprecation header. */
  @Post('users/:user/access_tokens')
  @HttpCode(200)
  @Header('Deprecation', 'true')
  @ApiOperation({
    deprecated: true,
    summary: 'Issue a temporary access token for the user (deprecated: to be removed in a future release)',
  })
  @ApiAnswer(AccessTokenAnswer, { errors: [404, 422] })
  @ApiRequest({ body: IssueAccessTokenBody })
  async issueToken(@Param('user') userId: string, @Body() body: IssueAccessTokenBody, @CurrentCaller() caller: Caller) {
    const grant = { expiresIn: body.expires_in, scope: body.scope, access: body.access };
    const token = await this.commands.execute(new IssueAccessToken(userId, grant, caller));
    await this.progress.waitFor([ACCESS_TOKENS], token.position);
    return {
      status: 'success',
      access_token: { id: token.tokenId, user_id: token.userId, expires_in: token.expiresIn, scope: token.scope, access: token.access },
    };
  }

  /** A deleted user can still be restored by PUT, and the answer then shows it. */
  private async userBody(partnerId: string, userId: string, evenDeleted = false) {
    const user = evenDeleted ? await this.accounts.userEvenDeleted(partnerId, userId) : await this.accounts.user(partnerId, userId);
    if (!user) throw new NotFound(`user ${userId} not found`);
    return toUser(user, this.settings.defaultAvatarUrl);
  }
}
