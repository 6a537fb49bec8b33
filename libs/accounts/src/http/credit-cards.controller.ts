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
import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MakeCardDefault, StoreCard } from '../commands/store-card.command';
import { STORED_CARDS } from '../projections/stored-cards/stored-cards.projection';
import { USER_ACCOUNTS } from '../projections/user-accounts/user-accounts.projection';
import { AccountQueries } from '../queries/account.queries';
import { CreditCardIdAnswer, CreditCardsAnswer, StatusAnswer, toCard } from './account.answers';
import { CardListQuery, CardParams, StoreCardBody } from './credit-card.request';

/** With partner credentials a card call names its user; a user's access token acts for its own. */
/** A user's stored cards, masked. */
@ApiTags('accounts')
@Controller('credit_cards')
export class CreditCardsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
  ) {}

  @Get()
  @CalledBy(...PARTNERS, userToken('credit_card'))
  @ApiOperation({
    summary: "List a user's stored cards",
    description: 'With `count`, `per_page` and `page`; the cards, masked. With count=true: {status, count}.',
  })
  @ApiAnswer(CreditCardsAnswer, { errors: [404, 422] })
  @ApiRequest({ query: CardListQuery })
  async list(@Query() query: CardListQuery, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const userId = requiredActingUser(request, query.user_id, 'credit_card');
    const { paging } = query;
    const user = await this.accounts.user(caller.partnerId, userId);
    if (!user) throw new NotFound('user not found');
    const total = await this.accounts.countCards(caller.partnerId, userId);
    if (paging.count) return { status: 'success', count: total };
    const cards = await this.accounts.cards(caller.partnerId, userId, paging.skip, paging.perPage);
    return { status: 'success', credit_cards: cards.map((card) => toCard(card, user.defaultCardId, total === 1)) };
  }

  @Post()
  @CalledBy(...PARTNERS, userToken('credit_card'))
  @HttpCode(200)
  @ApiOperation({
    summary: 'Store a card for a user',
    description:
      'The card is checked, exchanged with the payment processor for a token, and only the token, brand, ' +
      "last four digits and expiry are kept. The same card stored again for the user is the card already stored. A user's first card is its default.",
  })
  @ApiAnswer(CreditCardIdAnswer, { errors: [404, 422] })
  @ApiRequest({ body: StoreCardBody })
  async store(@Body() body: StoreCardBody, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const userId = requiredActingUser(request, body.userId, 'credit_card');
    const { cardId, position } = await this.commands.execute(new StoreCard(userId, body.card, caller));
    await this.progress.waitFor([STORED_CARDS, USER_ACCOUNTS], position);
    return { status: 'success', credit_card_id: cardId };
  }

  @Put(':credit_card_id/default')
  @CalledBy(...PARTNERS, userToken('credit_card'))
  @ApiOperation({ summary: "Make a card its user's default", description: "A user's only card is its default." })
  @ApiAnswer(StatusAnswer, { errors: [404, 422] })
  @ApiRequest({ params: CardParams })
  async makeDefault(@Param() params: CardParams, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const { position } = await this.commands.execute(new MakeCardDefault(params.credit_card_id, request.userToken?.userId, caller));
    await this.progress.waitFor([USER_ACCOUNTS], position);
    return { status: 'success' };
  }
}
