import { AccountQueries } from '@deals/accounts';
import { NotFound, ViewProgress } from '@deals/kernel';
import {
  ApiAnswer,
  ApiRequest,
  AuthenticatedRequest,
  AuthRequest,
  Caller,
  CurrentCaller,
  CalledBy,
  PARTNERS,
  userToken,
} from '@deals/wire';
import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { SetSubscriptionStatus, SubscribeUser } from '../commands/subscription.commands';
import { SUBSCRIPTIONS } from '../projections/subscriptions/subscriptions.projection';
import { EngagementQueries } from '../queries/engagement.queries';
import { SubscriptionAnswer, SubscriptionListAnswer, toSubscription } from './engagement.answers';
import { SubscribeBody, SubscriptionListQuery, SubscriptionParams, SubscriptionStatusBody } from './engagement.request';

/** A user's regional email subscriptions. */
@ApiTags('engagement')
@Controller()
export class SubscriptionsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: EngagementQueries,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
  ) {}

  @Post('users/:user_id/subscriptions')
  @CalledBy(...PARTNERS, userToken('subscription'))
  @HttpCode(200)
  @ApiOperation({
    summary: 'Subscribe a user to the region of a zip',
    description:
      'The region that serves `zip` (as the regional lists find it); one subscription per user and region: subscribing again answers it, active again if it was inactive. A zip no region serves is 422.',
  })
  @ApiAnswer(SubscriptionAnswer, { errors: [404, 422] })
  @ApiRequest({ body: SubscribeBody })
  async subscribe(@Param('user_id') userId: string, @Body() body: SubscribeBody, @CurrentCaller() caller: Caller) {
    const { subscriptionId, position } = await this.commands.execute(new SubscribeUser(userId, body.zip, body.source, caller));
    return this.answer(caller, subscriptionId, position);
  }

  @Get('subscriptions/:subscription_id')
  @CalledBy(...PARTNERS, userToken('subscription'))
  @ApiOperation({ summary: 'A subscription', description: 'One subscription, by its id.' })
  @ApiAnswer(SubscriptionAnswer, { errors: [404, 422] })
  @ApiRequest({ params: SubscriptionParams })
  async one(@Param() params: SubscriptionParams, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const found = await this.queries.subscription(caller.partnerId, params.subscription_id);
    const token = request.userToken;
    if (!found || (token && found.userId !== token.userId)) throw new NotFound('subscription not found');
    return { status: 'success', subscription: toSubscription(found) };
  }

  @Put('subscriptions/:subscription_id')
  @CalledBy(...PARTNERS, userToken('subscription'))
  @ApiOperation({ summary: "Set a subscription's status", description: '`status` active or inactive.' })
  @ApiAnswer(SubscriptionAnswer, { errors: [404, 422] })
  @ApiRequest({ params: SubscriptionParams, body: SubscriptionStatusBody })
  async setStatus(
    @Param() params: SubscriptionParams,
    @Body() body: SubscriptionStatusBody,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    const { position } = await this.commands.execute(
      new SetSubscriptionStatus(params.subscription_id, body.status, request.userToken?.userId, caller),
    );
    return this.answer(caller, params.subscription_id, position);
  }

  @Get('users/:user_id/subscriptions')
  @CalledBy(...PARTNERS, userToken('subscription', { pathUserMayBeEmail: true }))
  @ApiOperation({
    summary: "A user's subscriptions",
    description:
      "The user by id, or by the email of one of the partner's users (`/users/ann@example.com/subscriptions`); `count`, `per_page`, `page`.",
  })
  @ApiParam({ name: 'user_id', description: 'the user’s id, or its email' })
  @ApiAnswer(SubscriptionListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: SubscriptionListQuery })
  async ofUser(
    @Param('user_id') idOrEmail: string,
    @Query() query: SubscriptionListQuery,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    const { paging } = query;
    const user = idOrEmail.includes('@')
      ? await this.accounts.userByEmailEvenDeleted(caller.partnerId, idOrEmail)
      : await this.accounts.userEvenDeleted(caller.partnerId, idOrEmail);
    if (!user || (request.userToken && user._id !== request.userToken.userId)) throw new NotFound('user not found');
    if (paging.count) return { status: 'success', count: await this.queries.countSubscriptions(caller.partnerId, user._id) };
    const found = await this.queries.subscriptions(caller.partnerId, user._id, paging.skip, paging.perPage);
    return { status: 'success', subscriptions: found.map(toSubscription) };
  }

  private async answer(caller: Caller, subscriptionId: string, position: Parameters<ViewProgress['waitFor']>[1]) {
    await this.progress.waitFor([SUBSCRIPTIONS], position);
    const found = await this.queries.subscription(caller.partnerId, subscriptionId);
    if (!found) throw new NotFound('subscription not found');
    return { status: 'success', subscription: toSubscription(found) };
  }
}
