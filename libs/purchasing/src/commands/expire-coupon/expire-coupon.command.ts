import { Clock, EventStore, handleCommand, LogPosition, OPERATOR } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { couponDecider } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';

/** The expiry sweep's record of a coupon past its expiry (a no-op when recorded, redeemed, cancelled or not yet due). */
export class ExpireCoupon extends Command<{ position: LogPosition | null; recorded: boolean }> {
  constructor(
    readonly couponId: string,
    /** The coupon's partner, for the event's metadata (the feed of issue 37 is per partner). */
    readonly partnerId: string,
  ) {
    super();
  }
}

@CommandHandler(ExpireCoupon)
export class ExpireCouponHandler implements ICommandHandler<ExpireCoupon> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ couponId, partnerId }: ExpireCoupon) {
    const { position, events } = await handleCommand(
      this.store,
      couponStream(couponId),
      couponDecider,
      { type: 'ExpireCoupon', data: { couponId } },
      { now: this.clock.now(), metadata: { ...OPERATOR, actor: 'system', partnerId } },
    );
    return { position, recorded: events.length > 0 };
  }
}
