import { NotFound, ViewProgress, ViewStore } from '@deals/kernel';
import {
  answerRepeatsWithoutSecret,
  ApiAnswer,
  ApiRequest,
  AuthenticatedRequest,
  AuthRequest,
  ByPartner,
  Caller,
  CurrentCaller,
  NotUnderTestClock,
  CalledBy,
  PARTNERS,
  userToken,
  NoBody,
} from '@deals/wire';
import { Body, Controller, Delete, Get, Header, HttpCode, Logger, Param, Post, Put, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountsSettings } from '../commands/accounts-settings';
import { EraseUser, IssueAccessToken, RegisterUser, UpdateUser, UpdateUserByEmail } from '../commands/user.commands';
import { USER_ACCOUNTS } from '../projections/user-accounts/user-accounts.projection';
import { ACCESS_TOKENS } from '../projections/access-tokens/access-tokens.projection';
import { AccountQueries } from '../queries/account.queries';
import { AccessTokenAnswer, toUser, UserAnswer, UserErasureAnswer, UserIdAnswer } from './account.answers';
import { IssueAccessTokenBody } from './access-token.request';
import { ByEmailParams, ByEmailQuery, CreateUserBody, UpdateByEmailBody, UpdateUserBody, UserParams } from './user.request';

/** Users and their temporary access tokens. */
@ApiTags('accounts')
@Controller()
export class UsersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
    private readonly settings: AccountsSettings,
    private readonly views: ViewStore,
  ) {}

  @Post('users')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a user',
    description:
      'The email is unique per partner (compared case-insensitively): a taken one is refused (422). ' +
      'source and token are taken with partner credentials only; credits default to the new-user signup credit.',
  })
  @ApiAnswer(UserIdAnswer, { errors: [422] })
  @ApiRequest({ body: CreateUserBody })
  async create(@Body() body: CreateUserBody, @CurrentCaller() caller: Caller, @ByPartner() byPartner: boolean) {
    const { userId, position } = await this.commands.execute(new RegisterUser(body, byPartner, caller));
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success', user_id: userId };
  }

  @Get('users/:user_id')
  @CalledBy(...PARTNERS, userToken('user'))
  @ApiOperation({ summary: 'Show a user', description: 'The user. A deleted user is not found.' })
  @ApiAnswer(UserAnswer, { errors: [404] })
  @ApiRequest({ params: UserParams })
  async one(@Param() params: UserParams, @CurrentCaller() caller: Caller) {
    return { status: 'success', user: await this.userBody(caller.partnerId, params.user_id) };
  }

  @Put('users/:user_id')
  @CalledBy(...PARTNERS, userToken('user'))
  @ApiOperation({
    summary: 'Update a user',
    description:
      'Profile fields, a password (at least 5 characters, with its confirmation; pass or password), ' +
      'is_deleted (soft delete; only is_deleted=false changes a deleted user). source and token with partner credentials only. ' +
      'Answers the user.',
  })
  @ApiAnswer(UserAnswer, { errors: [404, 422] })
  @ApiRequest({ params: UserParams, body: UpdateUserBody })
  async update(
    @Param() params: UserParams,
    @Body() body: UpdateUserBody,
    @CurrentCaller() caller: Caller,
    @ByPartner() byPartner: boolean,
  ) {
    const { position } = await this.commands.execute(new UpdateUser(params.user_id, body, byPartner, caller));
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success', user: await this.userBody(caller.partnerId, params.user_id, true) };
  }

  @Delete('users/:user_id/personal_data')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: "Erase a user's personal data",
    description:
      'For good: the email, names, birthday, postal code, partner_data and shipping addresses become unreadable ' +
      'everywhere the service keeps them (its log keeps only their ciphertext, and the key is deleted). ' +
      'The user is deleted and cannot be restored; its purchases, coupons and amounts stay. The email is free for a new user. ' +
      'A user.erased event goes to the feed and to webhooks. Asked again, answers the first erasure. Partner credentials only.',
  })
  @ApiAnswer(UserErasureAnswer, { errors: [404] })
  @ApiRequest({ params: UserParams })
  async erase(@Param() params: UserParams, @NoBody() _body: void, @CurrentCaller() caller: Caller) {
    const { userId, erasedAt, position } = await this.commands.execute(new EraseUser(params.user_id, caller));
    await this.progress.waitFor([USER_ACCOUNTS], position);
    // Answered once no view file holds an earlier copy of what was erased (a file kept busy meanwhile
    // is not the erasure's failure: its copies go at its next checkpoint).
    await this.views.discardReplaced().catch((error: unknown) => new Logger('PersonalData').warn(String(error)));
    return { status: 'success', user_id: userId, erased_at: erasedAt };
  }

  @Put('api/v1/users/:email/update_by_email')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: 'Update or create a user by email',
    description:
      'A token sent unchanged, or where none was stored, updates as usual; a different token is ' +
      'replaced only with overwrite_token=true, else 422 update_failed; an unknown email creates the user. ' +
      'No password is taken here (PUT /users/:user_id sets it). Answers the user.',
  })
  @ApiAnswer(UserAnswer, { errors: [422] })
  @ApiRequest({ params: ByEmailParams, query: ByEmailQuery, body: UpdateByEmailBody })
  async updateByEmail(
    @Param() params: ByEmailParams,
    @Query() query: ByEmailQuery,
    @Body() body: UpdateByEmailBody,
    @CurrentCaller() caller: Caller,
  ) {
    const { userId, position } = await this.commands.execute(
      new UpdateUserByEmail(params.email, body, query.overwrite_token === true, caller),
    );
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success', user: await this.userBody(caller.partnerId, userId, true) };
  }

  /** Deprecated (docs/versioning.md); served while it exists, answered with a Deprecation header. */
  @Post('users/:user/access_tokens')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @Header('Deprecation', 'true')
  @ApiOperation({
    deprecated: true,
    summary: 'Issue a temporary access token for the user (deprecated: to be removed in a future release)',
    description: 'A token acting for the user within its scope, access and lifetime. Marked for removal in a future release.',
  })
  @ApiAnswer(AccessTokenAnswer, { errors: [404, 422] })
  @ApiRequest({ body: IssueAccessTokenBody })
  @UseGuards(NotUnderTestClock)
  async issueToken(
    @Param('user') userId: string,
    @Body() body: IssueAccessTokenBody,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    const grant = { expiresIn: body.expires_in, scope: body.scope, access: body.access };
    const token = await this.commands.execute(new IssueAccessToken(userId, grant, caller, request.partner?.credentialId));
    await this.progress.waitFor([ACCESS_TOKENS], token.position);
    answerRepeatsWithoutSecret(request);
    return {
      status: 'success',
      access_token: { id: token.tokenId, user_id: token.userId, expires_in: token.expiresIn, scope: token.scope, access: token.access },
    };
  }

  /** A deleted user can still be restored by PUT, and the answer then shows it. */
  private async userBody(partnerId: string, userId: string, evenDeleted = false) {
    const user = await this.accounts.userEvenDeleted(partnerId, userId);
    if (user?.erasedAt) throw new NotFound('user not found: their personal data was erased');
    if (!user || (user.deleted && !evenDeleted)) throw new NotFound('user not found');
    return toUser(user, this.settings.defaultAvatarUrl);
  }
}
