import { Clock, EventStore, handleCommand, LogPosition, PartnerCaller } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { couponDecider } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';

/** PUT /coupons/:id/redeem and PUT /users/:user_id/coupons/:id/redeem (then only that user's). */
export class RedeemCoupon extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly couponId: string,
    readonly userId: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(RedeemCoupon)
export class RedeemCouponHandler implements ICommandHandler<RedeemCoupon> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ couponId, userId, caller }: RedeemCoupon) {
    const { position } = await handleCommand(
      this.store,
      couponStream(couponId),
      couponDecider,
      {
        type: 'RedeemCoupon',
        data: { couponId, partnerId: caller.partnerId, userId },
      },
      { now: this.clock.now(), metadata: caller },
    );
    return { position };
  }
}
