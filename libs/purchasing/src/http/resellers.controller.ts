import { CatalogLinks } from '@deals/catalog';
import { Clock, NotFound, ViewProgress } from '@deals/kernel';
import { Caller, CurrentCaller, humanUtc, CalledBy, NoBody, PARTNERS } from '@deals/wire';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, ApiRequest, openApiSchema, ShapesErrorBodies } from '@deals/wire';
import { ResellerSaleBody } from './reseller-purchase.request';
import {
  CancelAnswer,
  ResaleBuyerErasureAnswer,
  ResellerCouponAnswer,
  ResellerNotCancelled,
  ResellerNotFound,
  ResellerPurchaseAnswer,
} from './purchasing.answers';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { CancelCoupon } from '../commands/cancel-coupon/cancel-coupon.command';
import { RecordResellerPurchase } from '../commands/record-reseller-purchase/record-reseller-purchase.command';
import { EraseResaleBuyer } from '../commands/erase-resale-buyer/erase-resale-buyer.command';
import { CouponNotRefundable } from '../domain/coupon/coupon.decider';
import { COUPON_DETAILS } from '../projections/coupon-details/coupon-details.projection';
import { PURCHASE_DETAILS } from '../projections/purchase-details/purchase-details.projection';
import { RESALE_BUYER_ERASURES } from '../projections/resale-buyer-erasures/resale-buyer-erasures.projection';
import { PurchaseQueries } from '../queries/purchase.queries';
import { CouponQr } from '../coupon-images/coupon-qr';
import { CouponLinks, toCoupon } from './purchase.answers';
import { asResellerNotCancelled } from './reseller-coupon-errors';

/** Sales recorded by resellers, and their coupons (HTTP basic, /api/v3). */
@ApiTags('purchasing')
@Controller('api/v3')
export class ResellersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly purchases: PurchaseQueries,
    private readonly progress: ViewProgress,
    private readonly catalog: CatalogLinks,
    private readonly links: CouponLinks,
    private readonly qr: CouponQr,
    private readonly clock: Clock,
  ) {}

  @Post(['resellers/purchases', 'resellers/purchases.json'])
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Record a sale a reseller made',
    description:
      'Every sale needs `deal_id`, `transaction_reference`, `transaction_date` and `transaction_amount`; daily and on-going deals ' +
      'also `quantity`, `first_name` and `last_name`; shipped deals those and the address (`address_type`, `address1`, `address2`, ' +
      '`postal_code`, `city`, `state`, `country`, `telephone`). A repeated `transaction_reference` answers the first sale. ' +
      'Refusals: 422 cannot_fulfill or validation_failed (each missing field named).',
  })
  @ApiAnswer(ResellerPurchaseAnswer, { errors: [404, 422] })
  @ApiRequest({ body: ResellerSaleBody })
  async record(@Body() sale: ResellerSaleBody, @CurrentCaller() caller: Caller) {
    const { purchaseId, position } = await this.commands.execute(new RecordResellerPurchase(sale, caller));
    await this.progress.waitFor([PURCHASE_DETAILS, COUPON_DETAILS], position);
    const purchase = (await this.purchases.purchase(caller.partnerId, purchaseId))!;
    const now = this.clock.now().getTime();
    const coupons = await this.purchases.coupons(purchase.couponIds);
    const image = purchase.deal.imageUrl ?? `/images/deals/${purchase.deal.dealId}.jpg`;
    return {
      id: purchase._id,
      transaction_reference: purchase.transactionReference,
      amount: purchase.amountCents,
      number_bought: purchase.quantity,
      fulfillment_state: purchase.fulfillmentState,
      created_at: humanUtc(purchase.createdAt),
      deal: { id: purchase.deal.dealId, title: purchase.deal.title, image_url_abs: `${this.catalog.imageBaseUrl}${image}` },
      coupons: await Promise.all(coupons.map(async (c) => toCoupon(c, now, this.links, await this.qr.base64(c.redemptionCode), false))),
    };
  }

  @Delete('resellers/purchases/:purchase_id/buyer')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: "Erase a reseller sale's buyer",
    description:
      'For good: the first and last names, the address and the telephone the sale gave become unreadable everywhere the ' +
      'service keeps them (its log keeps only their ciphertext, under a key of the sale of its own, and the key is deleted). ' +
      'The purchase, its coupons and amounts stay. Asked again, answers the first erasure. ' +
      "Refusals: 404 (no such sale of this partner), 422 (a purchase that is not a reseller's: its buyer is a user).",
  })
  @ApiAnswer(ResaleBuyerErasureAnswer, { errors: [404, 422] })
  async eraseBuyer(@Param('purchase_id') purchaseId: string, @NoBody() _body: void, @CurrentCaller() caller: Caller) {
    const { erasedAt, position } = await this.commands.execute(new EraseResaleBuyer(purchaseId, caller.partnerId, caller));
    await this.progress.waitFor([RESALE_BUYER_ERASURES], position);
    return { status: 'success', purchase_id: purchaseId, erased_at: erasedAt };
  }

  @Get('coupons/:coupon_id')
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: "A reseller sale's coupon", description: 'The coupon without print_url (a `.json` suffix is accepted).' })
  @ApiAnswer(ResellerCouponAnswer, { errors: [404] })
  async coupon(@Param('coupon_id') given: string, @CurrentCaller() caller: Caller) {
    // `.json` is taken as on the other v3 and get-purchase calls.
    const couponId = given.replace(/\.json$/, '');
    const coupon = await this.purchases.coupon(couponId);
    if (!coupon || coupon.partnerId !== caller.partnerId) throw new NotFound('coupon not found');
    return { coupon: toCoupon(coupon, this.clock.now().getTime(), this.links, await this.qr.base64(coupon.redemptionCode), false) };
  }

  /**
   * The reseller coupon error bodies: 404 with `message`/`type`, 422 with `code` and `errors.coupons`,
   * every 422 of the route, those made before the handler included (ShapesErrorBodies).
   */
  @Delete('coupons/:coupon_id/cancel')
  @CalledBy(...PARTNERS)
  @ShapesErrorBodies({ 422: asResellerNotCancelled })
  @ApiOperation({
    summary: "Cancel a reseller sale's coupon",
    description: 'Only coupons of reseller purchases; refusals in the reseller coupon error bodies.',
  })
  @ApiAnswer(CancelAnswer)
  @ApiResponse({
    status: 404,
    description: 'no such coupon (the reseller coupon error body)',
    schema: openApiSchema(ResellerNotFound, 'output'),
  })
  @ApiResponse({
    status: 422,
    description:
      'the coupon cannot be cancelled: the reseller coupon error body, with the reasons in errors.coupons; a request refused ' +
      "before the coupon is looked at (its text or body, its Idempotency-Key) answers the same body, with the error body's " +
      'error_type and error_msg beside',
    schema: openApiSchema(ResellerNotCancelled, 'output'),
  })
  async cancel(@Param('coupon_id') couponId: string, @CurrentCaller() caller: Caller, @Res({ passthrough: true }) reply: FastifyReply) {
    try {
      const { position } = await this.commands.execute(new CancelCoupon(couponId, caller));
      await this.progress.waitFor([COUPON_DETAILS], position);
      return { status: 'success' };
    } catch (error) {
      // The status set here, the body returned: Nest sends it (sending it here too logged "Reply was already sent").
      if (error instanceof NotFound) {
        void reply.status(404);
        return { status: 'error', message: error.message, type: 'find_failed' };
      }
      if (error instanceof CouponNotRefundable) {
        void reply.status(422);
        return { status: 'error', message: 'the coupon cannot be cancelled', code: '422', errors: { coupons: [error.reason] } };
      }
      throw error;
    }
  }
}
