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
  requiredActingUser,
  userToken,
} from '@deals/wire';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { RemoveSavedDeal, SaveDeal } from '../commands/saved-deal.commands';
import { SAVED_DEALS } from '../projections/saved-deals/saved-deals.projection';
import { EngagementQueries } from '../queries/engagement.queries';
import { SavedDealAnswer, SavedDealListAnswer, StatusOnlyAnswer, toSavedDeal } from './engagement.answers';
import { SaveDealBody, SavedDealListQuery, SavedDealParams } from './engagement.request';

/** A user's saved deals. */
@ApiTags('engagement')
@Controller()
export class SavedDealsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: EngagementQueries,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
  ) {}

  @Post('saved_deals')
  @CalledBy(...PARTNERS, userToken('saved_deal'))
  @HttpCode(200)
  @ApiOperation({
    summary: 'Save a deal for a user',
    description:
      'A public deal (not submitted, in review, rejected, cancelled or deleted), for a live user. ' +
      'Saving it again answers the one saved; saved again after a delete, it is the same saved deal.',
  })
  @ApiAnswer(SavedDealAnswer, { errors: [404, 422] })
  @ApiRequest({ body: SaveDealBody })
  async save(@Body() body: SaveDealBody, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const userId = requiredActingUser(request, body.user_id, 'saved_deal');
    const { savedDealId, position } = await this.commands.execute(new SaveDeal(userId, body.deal_id, caller));
    await this.progress.waitFor([SAVED_DEALS], position);
    const saved = await this.queries.savedDeal(caller.partnerId, savedDealId);
    if (!saved) throw new NotFound('saved deal not found');
    return { status: 'success', saved_deal: toSavedDeal(saved) };
  }

  @Delete('saved_deals/:saved_deal_id')
  @CalledBy(...PARTNERS, userToken('saved_deal'))
  @ApiOperation({ summary: 'Delete a saved deal', description: 'A saved deal already deleted is not found.' })
  @ApiAnswer(StatusOnlyAnswer, { errors: [404, 422] })
  @ApiRequest({ params: SavedDealParams })
  async remove(@Param() params: SavedDealParams, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const { position } = await this.commands.execute(new RemoveSavedDeal(params.saved_deal_id, request.userToken?.userId, caller));
    await this.progress.waitFor([SAVED_DEALS], position);
    return { status: 'success' };
  }

  @Get('users/:user_id/saved_deals')
  @CalledBy(...PARTNERS, userToken('saved_deal'))
  @ApiOperation({ summary: "A user's saved deals", description: '`count`, `per_page`, `page`; the latest saved first.' })
  @ApiAnswer(SavedDealListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: SavedDealListQuery })
  async ofUser(@Param('user_id') userId: string, @Query() query: SavedDealListQuery, @CurrentCaller() caller: Caller) {
    const { paging } = query;
    if (!(await this.accounts.userEvenDeleted(caller.partnerId, userId))) throw new NotFound('user not found');
    if (paging.count) return { status: 'success', count: await this.queries.countSavedDeals(caller.partnerId, userId) };
    const saved = await this.queries.savedDeals(caller.partnerId, userId, paging.skip, paging.perPage);
    return { status: 'success', saved_deals: saved.map(toSavedDeal) };
  }
}
