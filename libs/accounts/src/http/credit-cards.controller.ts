import { NotFound, ValidationFailed, ViewProgress } from '@deals/kernel';
import { actingUser, AuthenticatedRequest, AuthRequest, Caller, CurrentCaller, parsePaging, TokenResource } from '@deals/wire';
import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { MakeCardDefault, StoreCard } from '../commands/store-card.command';
import { STORED_CARDS } from '../projections/stored-cards/stored-cards.projection';
import { USER_ACCOUNTS } from '../projections/user-accounts/user-accounts.projection';
import { AccountQueries } from '../queries/account.queries';
import { toCard } from './account.responses';

const missingUser = () =>
  new ValidationFailed([{ type: 'missing_field', resource: 'credit_card', field: 'user_id', message: 'is required' }]);

/** Part 4.10: a user's stored cards, masked. */
@Controller('credit_cards')
@TokenResource('credit_card')
export class CreditCardsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
  ) {}

  @Get()
  async list(@Query() query: Record<string, unknown>, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const userId = actingUser(request, query.user_id);
    if (!userId) throw missingUser();
    const paging = parsePaging(query, 'credit_card');
    const user = await this.accounts.user(caller.partnerId, userId);
    if (!user) throw new NotFound(`user ${userId} not found`);
    const total = await this.accounts.countCards(caller.partnerId, userId);
    if (paging.count) return { status: 'success', count: total };
    const cards = await this.accounts.cards(caller.partnerId, userId, paging.skip, paging.perPage);
    return { status: 'success', credit_cards: cards.map((card) => toCard(card, user.defaultCardId, total === 1)) };
  }

  @Post()
  @HttpCode(200)
  async store(
    @Body() body: Record<string, unknown> | undefined,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    const input = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
    const userId = actingUser(request, input.user_id);
    if (!userId) throw missingUser();
    const { cardId, position } = await this.commands.execute(new StoreCard(userId, input, caller));
    await this.progress.waitFor([STORED_CARDS, USER_ACCOUNTS], position);
    return { status: 'success', credit_card_id: cardId };
  }

  @Put(':credit_card_id/default')
  async makeDefault(
    @Param('credit_card_id') cardId: string,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    const { position } = await this.commands.execute(new MakeCardDefault(cardId, request.userToken?.userId, caller));
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success' };
  }
}
