import { AccountQueries } from '@deals/accounts';
import { NotFound, ViewProgress } from '@deals/kernel';
import { ApiAnswer, ApiRequest, Caller, CurrentCaller, CalledBy, PARTNERS } from '@deals/wire';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { RefundPurchase } from '../commands/refund-purchase/refund-purchase.command';
import { COUPON_DETAILS } from '../projections/coupon-details/coupon-details.projection';
import { REFUND_DETAILS } from '../projections/refund-details/refund-details.projection';
import { PurchaseQueries } from '../queries/purchase.queries';
import { RefundAnswer, RefundListAnswer, toRefund } from './refunds.answers';
import { RefundBody, RefundListQuery } from './refunds.request';

/** Refunds of a purchase's coupons, and the lists of them. */
@ApiTags('purchasing')
@Controller()
export class RefundsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly purchases: PurchaseQueries,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
  ) {}

  @Post('purchases/:purchase_id/refunds')
  @CalledBy(...PARTNERS)
  @HttpCode(201)
  @ApiOperation({
    summary: "Refund a purchase's coupons",
    description:
      'A paid purchase (stored card, full, claimed reservation; a reseller sale is cancelled with its own call). `coupon_ids` left out: ' +
      'every coupon that may still be refunded. A redeemed or expired coupon, or shipped goods, stay the buyer’s (422). Each coupon pays back ' +
      'its share of what was paid: the amount split evenly, the cents left over one each to the first coupons. The answer is the refund: ' +
      '`succeeded`, `failed` (the processor refused; its coupons may be refunded again) or `pending` (no answer yet: settled within minutes).',
  })
  @ApiAnswer(RefundAnswer, { status: 201, errors: [404, 422] })
  @ApiRequest({ body: RefundBody })
  async refund(@Param('purchase_id') purchaseId: string, @Body() body: RefundBody, @CurrentCaller() caller: Caller) {
    const { refundId, position } = await this.commands.execute(new RefundPurchase(purchaseId, body, caller));
    await this.progress.waitFor([REFUND_DETAILS, COUPON_DETAILS], position);
    const refund = await this.purchases.refund(caller.partnerId, refundId);
    if (!refund) throw new NotFound('refund not found');
    return { status: 'success', refund: toRefund(refund) };
  }

  @Get('purchases/:purchase_id/refunds')
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: "A purchase's refunds", description: 'Oldest first.' })
  @ApiAnswer(RefundListAnswer, { errors: [404] })
  async ofPurchase(@Param('purchase_id') purchaseId: string, @CurrentCaller() caller: Caller) {
    if (!(await this.purchases.purchase(caller.partnerId, purchaseId))) throw new NotFound('purchase not found');
    return { status: 'success', refunds: (await this.purchases.purchaseRefunds(caller.partnerId, purchaseId)).map(toRefund) };
  }

  @Get('users/:user_id/refunds')
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: "A user's refunds", description: 'Newest first; `count`, `per_page`, `page`.' })
  @ApiAnswer(RefundListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: RefundListQuery })
  async ofUser(@Param('user_id') userId: string, @Query() query: RefundListQuery, @CurrentCaller() caller: Caller) {
    const { paging } = query;
    if (!(await this.accounts.user(caller.partnerId, userId))) throw new NotFound('user not found');
    if (paging.count) return { status: 'success', count: await this.purchases.countUserRefunds(caller.partnerId, userId) };
    const list = await this.purchases.userRefunds(caller.partnerId, userId, paging.skip, paging.perPage);
    return { status: 'success', refunds: list.map(toRefund) };
  }
}
