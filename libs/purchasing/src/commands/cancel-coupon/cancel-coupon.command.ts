import { Clock, EventStore, handleCommand, LogPosition, PartnerCaller } from '@deals/kernel';
import { purchaseStream } from '../../domain/purchase/purchase.events';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { couponDecider } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';

/** DELETE /api/v3/coupons/:id/cancel. */
export class CancelCoupon extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly couponId: string,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(CancelCoupon)
export class CancelCouponHandler implements ICommandHandler<CancelCoupon> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ couponId, caller }: CancelCoupon) {
    // The coupon names its purchase; only a reseller's purchase (its sale recorded as resold) may be cancelled here.
    const issued = (await this.store.readStream(couponStream(couponId), 0))[0];
    const purchaseId = issued?.type === 'CouponIssued' ? (issued.data as { purchaseId?: unknown }).purchaseId : undefined;
    const resold =
      typeof purchaseId === 'string' &&
      (await this.store.readStream(purchaseStream(purchaseId), 0)).some((e) => e.type === 'PurchaseResold');
    const { position } = await handleCommand(
      this.store,
      couponStream(couponId),
      couponDecider,
      {
        type: 'CancelCoupon',
        data: { couponId, partnerId: caller.partnerId, resold },
      },
      { now: this.clock.now(), metadata: caller },
    );
    return { position };
  }
}
