import { AccountQueries } from '@deals/accounts';
import { NotFound, ViewProgress } from '@deals/kernel';
import {
  ApiAnswer,
  ApiRequest,
  AuthenticatedRequest,
  AuthRequest,
  Caller,
  CurrentCaller,
  RequestParameters,
  CalledBy,
  PARTNERS,
  requiredActingUser,
  userToken,
} from '@deals/wire';
import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { LinkCards, MoveCardLink, RedeemCardLinkTransaction, ReportCardTransactionPhase } from '../commands/card-link.commands';
import { CARD_LINK_DETAILS } from '../projections/card-link-details/card-link-details.projection';
import { CARD_TRANSACTIONS } from '../projections/card-transactions/card-transactions.projection';
import { CardLinkQueries } from '../queries/card-link.queries';
import {
  CardLinkAnswer,
  CardLinkListAnswer,
  CardTransactionAnswer,
  CardTransactionListAnswer,
  LinkCardsAnswer,
  RedeemAnswer,
  toCardLink,
  toCardTransaction,
} from './card-links.answers';
import {
  CardLinkListQuery,
  CardLinkParams,
  CardTransactionBody,
  CardTransactionListQuery,
  CardTransactionParams,
  LinkCardsParams,
  RedeemCardLinkBody,
} from './card-links.request';

/** Linking users to card-linked deals, moving links, and recording their transactions. */
@ApiTags('engagement')
@Controller()
export class CardLinksController {
  constructor(
    private readonly commands: CommandBus,
    private readonly links: CardLinkQueries,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
  ) {}

  @Post('card_links')
  @CalledBy(...PARTNERS, userToken('card_link'))
  @HttpCode(200)
  @ApiOperation({
    summary: 'Link a user to card-linked deals',
    description:
      '`user_id` and `deal_id`, or `deal_ids` (comma-separated, or an array; `deal_ids[]` in the query), in the JSON body or the query. ' +
      'Only card-linked deals on sale, for a live user. One link per user and deal: linking again answers the link (relinked if it was unlinked). ' +
      "Each deal's `max_linkage` bounds the users that ever link it. With `deal_ids`, all or nothing: a refusal names the deal and no link is made.",
  })
  @ApiAnswer(LinkCardsAnswer, { errors: [404, 422] })
  @ApiRequest({ body: LinkCardsParams })
  async link(@RequestParameters() params: LinkCardsParams, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    const userId = requiredActingUser(request, params.userId, 'card_link');
    const { cardLinkIds, position } = await this.commands.execute(new LinkCards(userId, params.dealIds, params.field, caller));
    await this.progress.waitFor([CARD_LINK_DETAILS], position);
    const links = (await this.links.links(cardLinkIds)).map(toCardLink);
    return params.field === 'deal_id' ? { status: 'success', card_link: links[0] } : { status: 'success', card_links: links };
  }

  @Put('card_links/:card_link_id/unlink')
  @CalledBy(...PARTNERS, userToken('card_link'))
  @ApiOperation({
    summary: 'Unlink a card link',
    description: 'Linked → unlinked (an unlinked link stays so). A fulfilled link moves no more.',
  })
  @ApiAnswer(CardLinkAnswer, { errors: [404, 422] })
  @ApiRequest({ params: CardLinkParams })
  unlink(@Param() params: CardLinkParams, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    return this.move(params.card_link_id, 'unlinked', caller, request);
  }

  @Put('card_links/:card_link_id/link')
  @CalledBy(...PARTNERS, userToken('card_link'))
  @ApiOperation({
    summary: 'Link a card link again',
    description:
      "Unlinked → linked (a linked link stays so), for a live user. A fulfilled link moves no more; the user's place is kept while unlinked.",
  })
  @ApiAnswer(CardLinkAnswer, { errors: [404, 422] })
  @ApiRequest({ params: CardLinkParams })
  relink(@Param() params: CardLinkParams, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    return this.move(params.card_link_id, 'linked', caller, request);
  }

  @Put('card_links/:card_link_id/redeem')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "Record a card link's transaction",
    description:
      "One of the user's card transactions at the merchant, on a linked link. Below the deal's `min_spend` it does not qualify; " +
      'a qualifying one earns `incentive_amount` or `incentive_percentage` of the amount, within `maximum_allowance`, and costs the partner ' +
      '`fixed_fee` plus `percent_fee`. `max_redemption` true, or the `num_qualifying`-th qualifying transaction, fulfils the link. ' +
      'A `transaction_reference` is recorded once per link: a repeat answers success and records nothing. ' +
      "What the card network reports, and what it earns, is the partner's word: a user's access token is refused (403).",
  })
  @ApiAnswer(RedeemAnswer, { errors: [403, 404, 422] })
  @ApiRequest({ params: CardLinkParams, body: RedeemCardLinkBody })
  async redeem(@Param() params: CardLinkParams, @Body() transaction: RedeemCardLinkBody, @CurrentCaller() caller: Caller) {
    const { position } = await this.commands.execute(new RedeemCardLinkTransaction(params.card_link_id, transaction, undefined, caller));
    await this.progress.waitFor([CARD_LINK_DETAILS], position);
    return { status: 'success' };
  }

  @Put('card_links/:card_link_id/transactions/:transaction_reference')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: 'Report a phase of a card transaction',
    description:
      "What the card network says of one of the user's transactions, by the partner's reference: `authorised` (recorded, earns nothing yet; " +
      'the link must be linked), `cleared` (earns as a redemption does: the incentive credited, the fee charged, counted towards ' +
      '`num_qualifying` and `maximum_allowance`, `max_redemption` fulfilling the link; a transaction authorised while linked clears though ' +
      'the link moved since), `refunded` (`transaction_amount` refunded, at most what cleared: the incentive and fee reversed down to what ' +
      'the amount kept earns, and a link whose fulfilment the refund took away is linked again; refunded before clearing, the authorisation ' +
      'is voided). Each phase is recorded once: its repeat answers the transaction, another amount is refused, an earlier phase arriving ' +
      'after a later one changes nothing. A redemption recorded with `PUT /card_links/:id/redeem` is a cleared transaction here. ' +
      "Partner credentials only: a user's access token is refused (403).",
  })
  @ApiAnswer(CardTransactionAnswer, { errors: [403, 404, 422] })
  @ApiRequest({ params: CardTransactionParams, body: CardTransactionBody })
  async reportTransaction(@Param() params: CardTransactionParams, @Body() report: CardTransactionBody, @CurrentCaller() caller: Caller) {
    const { card_link_id: cardLinkId, transaction_reference: reference } = params;
    const { position } = await this.commands.execute(new ReportCardTransactionPhase(cardLinkId, reference, report, undefined, caller));
    await this.progress.waitFor([CARD_TRANSACTIONS, CARD_LINK_DETAILS], position);
    return this.transactionAnswer(caller, cardLinkId, reference);
  }

  @Get('card_links/:card_link_id/transactions/:transaction_reference')
  @CalledBy(...PARTNERS, userToken('card_link'))
  @ApiOperation({ summary: 'A card transaction', description: 'Its phase, amounts, and what it earned and gave back.' })
  @ApiAnswer(CardTransactionAnswer, { errors: [404] })
  @ApiRequest({ params: CardTransactionParams })
  getTransaction(@Param() params: CardTransactionParams, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    return this.transactionAnswer(caller, params.card_link_id, params.transaction_reference, request.userToken?.userId);
  }

  @Get('card_links/:card_link_id/transactions')
  @CalledBy(...PARTNERS, userToken('card_link'))
  @ApiOperation({ summary: "A card link's transactions", description: 'In the order first reported; `count`, `per_page`, `page`.' })
  @ApiAnswer(CardTransactionListAnswer, { errors: [404, 422] })
  @ApiRequest({ params: CardLinkParams, query: CardTransactionListQuery })
  async listTransactions(
    @Param() params: CardLinkParams,
    @Query() query: CardTransactionListQuery,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    const link = await this.links.link(caller.partnerId, params.card_link_id);
    const userId = request.userToken?.userId;
    if (!link || (userId !== undefined && link.userId !== userId)) throw new NotFound('card link not found');
    const { paging } = query;
    if (paging.count) return { status: 'success', count: await this.links.countTransactions(link._id) };
    const list = await this.links.transactions(link._id, paging.skip, paging.perPage);
    return { status: 'success', card_transactions: list.map(toCardTransaction) };
  }

  @Get('users/:user_id/card_links')
  @CalledBy(...PARTNERS, userToken('card_link'))
  @ApiOperation({
    summary: "A user's card links",
    description: '`filter` (linked, unlinked, fulfilled, comma-separated), `count`, `per_page`, `page`; newest first.',
  })
  @ApiAnswer(CardLinkListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: CardLinkListQuery })
  async ofUser(@Param('user_id') userId: string, @Query() query: CardLinkListQuery, @CurrentCaller() caller: Caller) {
    const { paging, filter: states } = query;
    // A deleted user's links stay listed (the audit keeps them); another partner's user is not found.
    if (!(await this.accounts.userEvenDeleted(caller.partnerId, userId))) throw new NotFound('user not found');
    if (paging.count) return { status: 'success', count: await this.links.countUserLinks(caller.partnerId, userId, states) };
    const links = await this.links.userLinks(caller.partnerId, userId, states, paging.skip, paging.perPage);
    return { status: 'success', card_links: links.map(toCardLink) };
  }

  private async transactionAnswer(caller: Caller, cardLinkId: string, reference: string, userId?: string) {
    const transaction = await this.links.transaction(caller.partnerId, cardLinkId, reference);
    if (!transaction || (userId !== undefined && transaction.userId !== userId)) throw new NotFound('card transaction not found');
    return { status: 'success', card_transaction: toCardTransaction(transaction) };
  }

  private async move(cardLinkId: string, to: 'linked' | 'unlinked', caller: Caller, request: AuthenticatedRequest) {
    const { position } = await this.commands.execute(new MoveCardLink(cardLinkId, to, request.userToken?.userId, caller));
    await this.progress.waitFor([CARD_LINK_DETAILS], position);
    const link = await this.links.link(caller.partnerId, cardLinkId);
    if (!link) throw new NotFound('card link not found');
    return { status: 'success', card_link: toCardLink(link) };
  }
}
