import { Clock, CommandCaller, EventStore, handleCommand, LogPosition } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { couponDecider } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';
import { ROLLBACK_WINDOW_MS, RollbackReason } from '../../domain/coupon/redemption-rollback';

/** POST /coupons/:coupon_id/redemption_rollbacks: the coupon's redemption undone, with why and who asked. */
export class RollBackRedemption extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly couponId: string,
    readonly terms: { reason: RollbackReason; note: string | null },
    readonly caller: CommandCaller & { partnerId: string },
  ) {
    super();
  }
}

@CommandHandler(RollBackRedemption)
export class RollBackRedemptionHandler implements ICommandHandler<RollBackRedemption> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ couponId, terms, caller }: RollBackRedemption) {
    const { position } = await handleCommand(
      this.store,
      couponStream(couponId),
      couponDecider,
      {
        type: 'RollBackRedemption',
        data: { couponId, partnerId: caller.partnerId, ...terms, by: caller.actor, windowMs: ROLLBACK_WINDOW_MS },
      },
      { now: this.clock.now(), metadata: caller },
    );
    return { position };
  }
}
