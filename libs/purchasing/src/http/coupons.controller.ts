import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import { Clock, LogPosition, NotFound, ViewProgress } from '@deals/kernel';
import { actingUser, AuthenticatedRequest, AuthRequest, Caller, CurrentCaller, CalledBy, PARTNERS, userToken } from '@deals/wire';
import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, ApiErrors, ApiRequest } from '@deals/wire';
import { CouponAnswer, CouponListAnswer } from './purchasing.answers';
import { CouponLinkQuery, CouponListQuery } from './purchasing-lists.request';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { RedeemCoupon } from '../commands/redeem-coupon/redeem-coupon.command';
import { RollBackRedemption } from '../commands/roll-back-redemption/roll-back-redemption.command';
import { RollbackBody } from './refunds.request';
import { COUPON_DETAILS } from '../projections/coupon-details/coupon-details.projection';
import { couponStateFilter, PurchaseQueries } from '../queries/purchase.queries';
import { barcodeSvg } from '../coupon-images/coupon-barcode';
import { CouponQr } from '../coupon-images/coupon-qr';
import { couponState } from '../domain/coupon/coupon.decider';
import { couponTerms, printableCoupon, PRINTABLE_PAGE_POLICY } from './printable-coupon';
import { CouponLinks, toCoupon } from './purchase.answers';

/** A user's coupons, redeeming them, and their QR image and printable page. */
@ApiTags('purchasing')
@Controller()
export class CouponsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly purchases: PurchaseQueries,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
    private readonly links: CouponLinks,
    private readonly qr: CouponQr,
    private readonly catalog: CatalogQueries,
    private readonly clock: Clock,
  ) {}

  @Get('users/:user_id/coupons')
  @CalledBy(...PARTNERS, userToken('coupon'))
  @ApiOperation({ summary: "A user's coupons", description: '`filter` (valid, redeemed, expired), `count`, `per_page`, `page`.' })
  @ApiAnswer(CouponListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: CouponListQuery })
  async ofUser(@Param('user_id') userId: string, @Query() query: CouponListQuery, @CurrentCaller() caller: Caller) {
    const { paging, filter: words } = query;
    if (!(await this.accounts.user(caller.partnerId, userId))) throw new NotFound('user not found');
    const now = this.clock.now().getTime();
    const state = words.length ? couponStateFilter(words, now) : null;
    if (paging.count) return { status: 'success', count: await this.purchases.countUserCoupons(caller.partnerId, userId, state) };
    const coupons = await this.purchases.userCoupons(caller.partnerId, userId, state, paging.skip, paging.perPage);
    return {
      status: 'success',
      coupons: await Promise.all(coupons.map(async (c) => toCoupon(c, now, this.links, await this.qr.base64(c.redemptionCode)))),
    };
  }

  @Put('users/:user_id/coupons/:coupon_id/redeem')
  @CalledBy(...PARTNERS, userToken('coupon'))
  @ApiOperation({ summary: "Redeem a user's coupon", description: 'Valid → redeemed, redeemed_at set.' })
  @ApiAnswer(CouponAnswer, { errors: [404, 422] })
  redeemForUser(@Param('user_id') userId: string, @Param('coupon_id') couponId: string, @CurrentCaller() caller: Caller) {
    return this.redeem(couponId, userId, caller);
  }

  /** With partner credentials, any of the partner's coupons; with a user's access token, that user's only. */
  @Put('coupons/:coupon_id/redeem')
  @CalledBy(...PARTNERS, userToken('coupon'))
  @ApiOperation({ summary: 'Redeem a coupon', description: "Any of the partner's coupons, or the token's user's." })
  @ApiAnswer(CouponAnswer, { errors: [404, 422] })
  redeemAny(@Param('coupon_id') couponId: string, @CurrentCaller() caller: Caller, @AuthRequest() request: AuthenticatedRequest) {
    return this.redeem(couponId, actingUser(request, undefined), caller);
  }

  // Partner credentials only: a buyer undoing a redemption would use the coupon twice.
  @Post('coupons/:coupon_id/redemption_rollbacks')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: "Roll back a coupon's redemption",
    description:
      'A redemption made by mistake, undone within 24 hours of it: the coupon answers as before it (valid, or expired if its expiry ' +
      'passed meanwhile), the rollback recorded with its reason, note and who asked. A coupon not redeemed, or redeemed longer ago: 422.',
  })
  @ApiAnswer(CouponAnswer, { errors: [404, 422] })
  @ApiRequest({ body: RollbackBody })
  async rollBack(@Param('coupon_id') couponId: string, @Body() body: RollbackBody, @CurrentCaller() caller: Caller) {
    const { position } = await this.commands.execute(new RollBackRedemption(couponId, body, caller));
    return this.answer(couponId, position);
  }

  /**
   * Public (wire PUBLIC_PATHS): opened by the coupon's holder with the link's `key`; without it,
   * or with another, the coupon is not found.
   */
  @Get('coupons/:coupon_id/qr.png')
  @CalledBy('anyone')
  @ApiOperation({ summary: "A coupon's QR image", description: 'Public, with the `key` its `qr_code_url` carries; without it, 404.' })
  @ApiResponse({ status: 200, description: 'the QR image', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors(404)
  @ApiRequest({ query: CouponLinkQuery })
  async qrImage(@Param('coupon_id') couponId: string, @Query() link: CouponLinkQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    // The image never changes: kept by the holder's browser for a day.
    const coupon = await this.openedCoupon(couponId, link.key, reply);
    void reply.type('image/png').header('cache-control', 'private, max-age=86400');
    return this.qr.png(coupon.redemptionCode);
  }

  @Get('coupons/:coupon_id/print')
  @CalledBy('anyone')
  @ApiOperation({ summary: "A coupon's printable page", description: 'Public, with the `key` its `print_url` carries; without it, 404.' })
  @ApiResponse({ status: 200, description: 'the printable page', content: { 'text/html': { schema: { type: 'string' } } } })
  @ApiErrors(404)
  @ApiRequest({ query: CouponLinkQuery })
  async print(@Param('coupon_id') couponId: string, @Query() link: CouponLinkQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    // The page shows the codes that redeem the coupon and its state now: never stored by a cache.
    const coupon = await this.openedCoupon(couponId, link.key, reply);
    const [purchase, deal] = await Promise.all([
      this.purchases.purchase(coupon.partnerId, coupon.purchaseId),
      this.catalog.deal(coupon.dealId),
    ]);
    const region = deal?.deal ? await this.catalog.region(deal.deal.region_id) : null;
    const now = this.clock.now().getTime();
    // Only a valid coupon's codes are drawn: the page of any other shows none.
    const images =
      couponState(coupon, now) === 'valid'
        ? { qrPngBase64: await this.qr.base64(coupon.redemptionCode), barcodeSvg: barcodeSvg(coupon.barcode) }
        : null;
    void reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', PRINTABLE_PAGE_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');
    const page = {
      coupon,
      title: purchase?.deal.title ?? coupon.dealId,
      terms: deal?.deal ? couponTerms(deal.deal) : { locations: [] },
      timeZone: region?.region.time_zone ?? 'UTC',
      now,
    };
    return printableCoupon(page, images);
  }

  /**
   * The coupon a public link opens with its `key`; not found without it, or with another. The
   * answer is `no-store` until the caller says otherwise: a refusal is kept by no cache (the coupon
   * may be in the views a moment later).
   */
  private async openedCoupon(couponId: string, key: string | undefined, reply: FastifyReply) {
    void reply.header('cache-control', 'no-store');
    const coupon = this.links.opens(couponId, key) ? await this.purchases.coupon(couponId) : null;
    if (!coupon) throw new NotFound('coupon not found');
    return coupon;
  }

  private async redeem(couponId: string, userId: string | undefined, caller: Caller) {
    const { position } = await this.commands.execute(new RedeemCoupon(couponId, userId, caller));
    return this.answer(couponId, position);
  }

  private async answer(couponId: string, position: LogPosition | null) {
    await this.progress.waitFor([COUPON_DETAILS], position);
    const coupon = await this.purchases.coupon(couponId);
    const now = this.clock.now().getTime();
    return { status: 'success', coupon: toCoupon(coupon!, now, this.links, await this.qr.base64(coupon!.redemptionCode)) };
  }
}
