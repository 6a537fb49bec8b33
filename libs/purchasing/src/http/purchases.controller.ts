import { AccountQueries } from '@deals/accounts';
import { CatalogLinks } from '@deals/catalog';
import { Clock, IdempotentRun, NotFound, ViewProgress, WrittenNotShown } from '@deals/kernel';
import {
  actingUser,
  ApiAnswer,
  ApiRequest,
  AuthenticatedRequest,
  AuthRequest,
  Caller,
  CurrentCaller,
  IdempotentRequest,
  CalledBy,
  PARTNERS,
  ReadsViews,
  TakesDryRuns,
  userToken,
} from '@deals/wire';
import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { PurchaseListAnswer } from './purchasing.answers';
import { BuyWithStoredCard, PurchasePreview, StoredCardOutcome } from '../commands/buy-with-stored-card/buy-with-stored-card.command';
import { FullPurchase } from '../commands/full-purchase/full-purchase.command';
import { ClaimReservation } from '../commands/claim-reservation/claim-reservation.command';
import { ReleaseReservation } from '../commands/release-reservation/release-reservation.command';
import { ReserveUnits } from '../commands/reserve-units/reserve-units.command';
import { COUPON_DETAILS, CouponDetails } from '../projections/coupon-details/coupon-details.projection';
import { PURCHASE_DETAILS, PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';
import { PurchaseQueries } from '../queries/purchase.queries';
import { CouponQr } from '../coupon-images/coupon-qr';
import { CouponLinks, PurchaseAnswer, toCoupon, toPurchase } from './purchase.answers';
import { FullPurchaseBody } from './full-purchase.request';
import { toDryRun } from './dry-run.answers';
import { BuyWithStoredCardBody } from './buy-with-stored-card.request';
import { ClaimReservationBody, ReserveUnitsBody } from './reservation.request';
import { PurchaseListQuery } from './purchasing-lists.request';

const VIEWS = [PURCHASE_DETAILS, COUPON_DETAILS];

/** What the purchase calls say of the `dry_run` field they still take. */
const LEGACY_DRY_RUN = (operation: string) =>
  ` \`dry_run\` is deprecated: call ${operation} for a dry run (with \`dry_run: true\` this call still answers it, in that operation's answer).`;

/** Reserve, claim, release, one purchase, a user's purchases. */
@ApiTags('purchasing')
@Controller()
export class PurchasesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly purchases: PurchaseQueries,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
    private readonly catalog: CatalogLinks,
    private readonly links: CouponLinks,
    private readonly qr: CouponQr,
    private readonly clock: Clock,
  ) {}

  @Post('purchases/reserve')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Reserve units for five minutes',
    description: '`deal_id`, `num_bought` (1 to 1,000); the purchase answers reserved, its units held five minutes.',
  })
  @ApiAnswer(PurchaseAnswer, { errors: [404, 422] })
  @ApiRequest({ body: ReserveUnitsBody })
  async reserve(@Body() body: ReserveUnitsBody, @CurrentCaller() caller: Caller, @IdempotentRequest() keyed: IdempotentRun | null) {
    const { purchaseId, position } = await this.commands.execute(new ReserveUnits(body.deal_id, body.num_bought, caller, keyed));
    return this.answer(caller.partnerId, purchaseId, position, { written: true });
  }

  @Post('purchases')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Buy with a stored card',
    description:
      '`deal_id`, `quantity`, `user_id`, `credit_card_id`, `expected_price_per_unit` (the current price), `session_id`; ' +
      'a shipping address for shipped deals. One charge at a time per user (409 already_charging).' +
      LEGACY_DRY_RUN('POST /purchases/dry_run'),
  })
  @ApiAnswer(PurchaseAnswer, { errors: [404, 409, 422, 502] })
  @ApiRequest({ body: BuyWithStoredCardBody })
  @TakesDryRuns()
  async buy(@Body() order: BuyWithStoredCardBody, @CurrentCaller() caller: Caller, @IdempotentRequest() keyed: IdempotentRun | null) {
    const outcome = await this.commands.execute(new BuyWithStoredCard(order, caller, keyed));
    // The deprecated `dry_run: true`: the dry run's answer, as POST /purchases/dry_run gives it.
    if (outcome.preview) return toDryRun(outcome.preview, this.catalog);
    return this.sold(caller.partnerId, outcome);
  }

  @Post('v1/purchases/full.json')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Buy in one call: make the user, store the card, buy',
    description:
      'A user section (user_id or a user object), a card section (credit_card_id or a credit_card object) and, ' +
      'for a deal shipped, a shipping section; records that match are reused. A failing section makes nothing. ' +
      'Answers the purchase with its coupons; a refusal after the user or card was made names them (user_id, credit_card_id).' +
      LEGACY_DRY_RUN('POST /v1/purchases/full/dry_run.json'),
  })
  @ApiAnswer(PurchaseAnswer, { errors: [404, 409, 422, 502] })
  @ApiRequest({ body: FullPurchaseBody })
  @TakesDryRuns()
  async full(@Body() order: FullPurchaseBody, @CurrentCaller() caller: Caller, @IdempotentRequest() keyed: IdempotentRun | null) {
    const outcome = await this.commands.execute(new FullPurchase(order, caller, keyed));
    // The deprecated `dry_run: true`: the dry run's answer, as POST /v1/purchases/full/dry_run.json gives it.
    if (outcome.preview) return toDryRun(outcome.preview, this.catalog);
    return this.sold(caller.partnerId, outcome);
  }

  @Put(['purchases/:purchase_id/claim', 'purchases/:purchase_id/claim.json'])
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: 'Claim a reservation for a user', description: "`user_id`; counts against the deal's max_per_user." })
  @ApiAnswer(PurchaseAnswer, { errors: [404, 422] })
  @ApiRequest({ body: ClaimReservationBody })
  async claim(@Param('purchase_id') purchaseId: string, @Body() body: ClaimReservationBody, @CurrentCaller() caller: Caller) {
    const { position } = await this.commands.execute(new ClaimReservation(purchaseId, body.user_id, caller));
    return this.answer(caller.partnerId, purchaseId, position, { written: true });
  }

  @Put(['purchases/:purchase_id/release', 'purchases/:purchase_id/release.json'])
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: 'Release a reservation', description: 'Its units go back; refused once a claim has sold them.' })
  @ApiAnswer(PurchaseAnswer, { errors: [404, 422] })
  async release(@Param('purchase_id') purchaseId: string, @CurrentCaller() caller: Caller) {
    const { position } = await this.commands.execute(new ReleaseReservation(purchaseId, caller));
    return this.answer(caller.partnerId, purchaseId, position, { written: true });
  }

  @Get('purchases/:purchase_id')
  @CalledBy(...PARTNERS, userToken('purchase'))
  @ReadsViews(...VIEWS)
  @ApiOperation({ summary: 'Show a purchase', description: 'The purchase (a `.json` suffix is accepted), with its coupons.' })
  @ApiAnswer(PurchaseAnswer, { errors: [404] })
  async one(@Param('purchase_id') purchaseId: string, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    // A user's access token reads its own user's purchases only: another user's is not found.
    return this.answer(caller.partnerId, purchaseId.replace(/\.json$/, ''), null, { forUser: actingUser(request, undefined) });
  }

  @Get('users/:user_id/purchases')
  @CalledBy(...PARTNERS, userToken('purchase'))
  @ReadsViews(...VIEWS)
  @ApiOperation({ summary: "A user's purchases", description: '`count`, `per_page`, `page`.' })
  @ApiAnswer(PurchaseListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: PurchaseListQuery })
  async ofUser(@Param('user_id') userId: string, @Query() query: PurchaseListQuery, @CurrentCaller() caller: Caller) {
    const { paging } = query;
    if (!(await this.accounts.user(caller.partnerId, userId))) throw new NotFound('user not found');
    if (paging.count) return { status: 'success', count: await this.purchases.countUserPurchases(caller.partnerId, userId) };
    const list = await this.purchases.userPurchases(caller.partnerId, userId, paging.skip, paging.perPage);
    return { status: 'success', purchases: await Promise.all(list.map((p) => this.body(p))) };
  }

  /** A card purchase's answer: from what its units decided, else as the views show it once they include its writes. */
  private async sold(partnerId: string, { purchaseId, position, decided }: Exclude<StoredCardOutcome, { preview: PurchasePreview }>) {
    if (decided) return { status: 'success', purchase: await this.body(decided.purchase, decided.coupons) };
    return this.answer(partnerId, purchaseId, position, { written: true });
  }

  /**
   * The purchase as the views show it, once they include `position`. After a write (`written`), a
   * purchase they do not show yet (the worker behind or away past the wait) is no "not found": the
   * answer is 503 naming it, and a repeat with the same Idempotency-Key answers it once shown.
   */
  private async answer(
    partnerId: string,
    purchaseId: string,
    position: string | null,
    { written = false, forUser }: { written?: boolean; forUser?: string } = {},
  ) {
    await this.progress.waitFor(VIEWS, position);
    const purchase = await this.purchases.purchase(partnerId, purchaseId);
    if (!purchase && written)
      // eslint-disable-next-line no-restricted-syntax -- the id the service gave the purchase
      throw new WrittenNotShown(`purchase ${purchaseId} was recorded; its details are not readable yet`, { purchase_id: purchaseId });
    if (!purchase || (forUser !== undefined && purchase.userId !== forUser)) throw new NotFound('purchase not found');
    return { status: 'success', purchase: await this.body(purchase) };
  }

  /** The purchase's answer; its coupons read from their view unless given. */
  private async body(purchase: PurchaseDetails, given?: readonly CouponDetails[]) {
    const now = this.clock.now().getTime();
    const coupons = given ?? (await this.purchases.coupons(purchase.couponIds));
    const bodies = await Promise.all(coupons.map(async (c) => toCoupon(c, now, this.links, await this.qr.base64(c.redemptionCode))));
    return toPurchase(purchase, bodies, this.catalog, now);
  }
}
