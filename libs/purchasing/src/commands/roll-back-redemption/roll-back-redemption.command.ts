import { PartnerQueries } from '@deals/accounts';
import { accountOf, Clock, EventStore, handleCommand, LogPosition, PartnerCaller } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { couponDecider } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';
import { RollbackReason } from '../../domain/coupon/redemption-rollback';

/**
 * POST /coupons/:coupon_id/redemption_rollbacks: the coupon's redemption undone, with why and who
 * asked, within the window its partner set.
 */
export class RollBackRedemption extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly couponId: string,
    readonly terms: { reason: RollbackReason; note: string | null },
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(RollBackRedemption)
export class RollBackRedemptionHandler implements ICommandHandler<RollBackRedemption> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly partners: PartnerQueries,
  ) {}

  async execute({ couponId, terms, caller }: RollBackRedemption) {
    const windowMs = (await this.partners.settings(accountOf(caller.partnerId))).rollbackWindowHours * 3_600_000;
    const { position } = await handleCommand(
      this.store,
      couponStream(couponId),
      couponDecider,
      {
        type: 'RollBackRedemption',
        data: { couponId, partnerId: caller.partnerId, ...terms, by: caller.actor, windowMs },
      },
      { now: this.clock.now(), metadata: caller },
    );
    return { position };
  }
}
