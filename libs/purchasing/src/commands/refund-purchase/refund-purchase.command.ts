import {
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  handleCommands,
  handleDatedCommand,
  IdGenerator,
  inTimeOf,
  loadAggregate,
  LogPosition,
  NotFound,
  OPERATOR,
  PartnerCaller,
  PaymentGateway,
  runWorkflow,
  Scheduler,
  ValidationFailed,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { couponDecider, CouponNotRefundable } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';
import { armGiftMail } from '../purchase-steps/gift-mail-job';
import { Purchase, purchaseDecider, refundableCoupons, refundOf } from '../../domain/purchase/purchase.decider';
import { purchaseStream } from '../../domain/purchase/purchase.events';
import { RefundReason } from '../../domain/refund/refund-rules';
import { RefundWorkflowCommand, RefundWorkflowInput, refundWorkflow } from '../../domain/refund/refund.workflow';

/** The scheduled job that ends a refund a process left pending (its processor answer lost, or the process stopped). */
export const SETTLE_REFUND_JOB = 'settle-refund';
/** How long after its request a refund is settled by its job when its own request did not end it. */
export const SETTLE_AFTER_MS = 30_000;
/** A refund the processor did not answer is asked again: a minute, doubling, at most half an hour. */
const retryDelayMs = (attempt: number) => Math.min(60_000 * 2 ** Math.max(0, attempt - 1), 30 * 60_000);

export interface RefundTerms {
  /** The coupons to refund; null: every coupon of the purchase the rules let be refunded. */
  couponIds: string[] | null;
  reason: RefundReason;
  note: string | null;
  /** An operator's refund of coupons the rules keep (redeemed, expired, shipped goods). */
  forced: boolean;
}

/** POST /purchases/:purchase_id/refunds, and the operator's forced refund. */
export class RefundPurchase extends Command<{ refundId: string; position: LogPosition }> {
  constructor(
    readonly purchaseId: string,
    readonly terms: RefundTerms,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

/**
 * A refund's steps, each idempotent so that its settling job can run them again: the decision on
 * the purchase (which coupons, how much), then its settling (`refundWorkflow`): its coupons held
 * from redemption, the money back through the processor under the refund's own key (a claimed
 * reservation's the partner took itself, so it is recorded as paid back at once), the outcome on
 * the purchase, its coupons voided or given back.
 */
@Injectable()
export class RefundSteps {
  private readonly logger = new Logger('Refunds');

  constructor(
    private readonly store: EventStore,
    private readonly gateway: PaymentGateway,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
  ) {
    this.scheduler.handle(SETTLE_REFUND_JOB, async (job) => {
      const { purchaseId, refundId, partnerId } = job.data as { purchaseId: string; refundId: string; partnerId: string };
      const attempt = Number(job.data.attempt ?? 0) + 1;
      const settled = await this.settle(purchaseId, refundId, { ...OPERATOR, actor: 'system:refunds', partnerId });
      if (settled.state === 'pending') await this.arm(purchaseId, refundId, partnerId, retryDelayMs(attempt), attempt);
    });
  }

  /** Arms the job that settles the refund after `delayMs` if nothing has by then (logged when the scheduler fails: the next start settles it). */
  async arm(purchaseId: string, refundId: string, partnerId: string, delayMs = SETTLE_AFTER_MS, attempt = 0): Promise<void> {
    try {
      await this.scheduler.schedule({
        id: `${SETTLE_REFUND_JOB}-${refundId}-${attempt}`,
        kind: SETTLE_REFUND_JOB,
        runAt: new Date(this.clock.now().getTime() + delayMs),
        data: { purchaseId, refundId, partnerId, attempt },
      });
    } catch (error) {
      this.logger.error(`refund ${refundId}: its settling job was not armed (${(error as Error).message})`);
    }
  }

  async purchase(purchaseId: string): Promise<Purchase> {
    return (await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider)).state;
  }

  /**
   * Takes the refund from its decision to its end, as far as it can now (`refundWorkflow`): `pending`
   * when the processor gave no answer (its job asks again later). A coupon that can no longer be held
   * (redeemed since the request was checked) fails the refund, with the reason.
   */
  async settle(
    purchaseId: string,
    refundId: string,
    caller: PartnerCaller,
  ): Promise<{ state: 'succeeded' | 'failed' | 'pending'; position: LogPosition | null }> {
    const purchase = await this.purchase(purchaseId);
    const refund = refundOf(purchase, refundId);
    if (!refund || purchase.status !== 'fulfilled') return { state: 'failed', position: null };
    let position: LogPosition | null = null;
    const context = () => ({ now: this.clock.now(), metadata: caller });
    const wrote = (outcomes: ReadonlyArray<{ position: LogPosition | null }>) => {
      for (const outcome of outcomes) position = outcome.position ?? position;
    };
    const none = {} as Record<string, never>;
    const perform = async (command: RefundWorkflowCommand): Promise<RefundWorkflowInput | null> => {
      switch (command.type) {
        case 'HoldCoupons': {
          const refusal = await this.holdCoupons(command.data, context(), wrote);
          return refusal === null ? { type: 'CouponsHeld', data: none } : { type: 'CouponsRefused', data: { reason: refusal } };
        }
        case 'RefundCharge': {
          const answer = await this.gateway.refund(command.data);
          if (answer.status === 'error') {
            this.logger.warn(`refund ${refundId}: the processor did not answer (${answer.reason}); asked again later`);
            return { type: 'ChargeRefundUnanswered', data: { reason: answer.reason } };
          }
          return answer.status === 'refunded'
            ? { type: 'ChargeRefunded', data: { processorRefundId: answer.refundId } }
            : { type: 'ChargeRefundRefused', data: { reason: answer.reason } };
        }
        case 'RecordOutcome': {
          const recorded = await handleCommand(
            this.store,
            purchaseStream(purchaseId),
            purchaseDecider,
            { type: 'RecordRefundOutcome', data: command.data },
            context(),
          );
          wrote([recorded]);
          const state = refundOf(recorded.state, refundId)?.state ?? 'pending';
          return { type: 'OutcomeRecorded', data: { state } };
        }
        case 'FinishCoupons': {
          const { couponIds, outcome } = command.data;
          if (couponIds.length)
            wrote(
              await handleCommands(
                this.store,
                couponIds.map((couponId) => ({
                  streamId: couponStream(couponId),
                  decider: couponDecider,
                  command: { type: 'FinishRefund', data: { couponId, refundId, outcome } },
                })),
                context(),
              ),
            );
          return { type: 'CouponsFinished', data: none };
        }
      }
    };
    const settling: RefundWorkflowInput = {
      type: 'RefundSettling',
      data: { ...refund, purchaseId, partnerId: caller.partnerId, chargeId: purchase.charge?.chargeId ?? null },
    };
    const settled = await runWorkflow(refundWorkflow, settling, perform, this.clock);
    if (settled.state !== 'pending') await this.armWaitingGiftMail(purchase, purchaseId, caller.partnerId);
    return { state: settled.state, position };
  }

  /**
   * A gift whose time came while a refund of it was pending waited for the refund's end (`MailGifts`):
   * its mail is armed now (what the refund took back left out, or its coupons all the recipient's again).
   */
  private async armWaitingGiftMail(purchase: Purchase, purchaseId: string, partnerId: string): Promise<void> {
    if (purchase.status === 'none' || purchase.kind !== 'card' || !purchase.gift || purchase.gift.mailed) return;
    const { deliverAt } = purchase.gift;
    await inTimeOf(this.store, partnerId, async () => {
      const now = this.clock.now();
      if (deliverAt === null || Date.parse(deliverAt) <= now.getTime())
        await armGiftMail(this.scheduler, purchaseId, partnerId, { deliverAt: null }, now);
    });
  }

  /**
   * Holds every coupon for the refund in one unit of work (all or none); the reason of the first
   * coupon that refuses, or null when all are held.
   */
  private async holdCoupons(
    { couponIds, refundId, partnerId, forced }: Extract<RefundWorkflowCommand, { type: 'HoldCoupons' }>['data'],
    context: { now: Date; metadata: CommandCaller },
    wrote: (outcomes: ReadonlyArray<{ position: LogPosition | null }>) => void,
  ): Promise<string | null> {
    const start = (couponId: string) => ({ type: 'StartRefund' as const, data: { couponId, partnerId, refundId, forced } });
    if (couponIds.length === 0) return null;
    try {
      wrote(
        await handleCommands(
          this.store,
          couponIds.map((couponId) => ({ streamId: couponStream(couponId), decider: couponDecider, command: start(couponId) })),
          context,
        ),
      );
      return null;
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      // The unit's refusal names no coupon: the first that refuses on its own does.
      for (const couponId of couponIds) {
        const { state } = await loadAggregate(this.store, couponStream(couponId), couponDecider);
        try {
          couponDecider.decide(start(couponId), state, context.now);
        } catch (refused) {
          if (refused instanceof ValidationFailed) return `${couponId}: ${reasonOf(refused)}`;
          throw refused;
        }
      }
      return reasonOf(error);
    }
  }
}

const reasonOf = (error: ValidationFailed) => (error instanceof CouponNotRefundable ? error.reason : error.message);

/**
 * Refunds coupons of a paid purchase (stored card, full, claimed reservation). The coupons are
 * checked first (a named one the rules keep refuses the request; with none named, those the rules
 * let be refunded), then the decision is recorded, its settling job armed, and the refund taken as
 * far as it goes now: the answer is the refund, succeeded, failed or still pending.
 */
@CommandHandler(RefundPurchase)
export class RefundPurchaseHandler implements ICommandHandler<RefundPurchase> {
  constructor(
    private readonly store: EventStore,
    private readonly steps: RefundSteps,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async execute({ purchaseId, terms, caller }: RefundPurchase) {
    const purchase = await this.steps.purchase(purchaseId);
    const now = this.clock.now();
    const decide = (couponIds: string[], refundId: string) =>
      ({
        type: 'RequestRefund',
        data: {
          purchaseId,
          partnerId: caller.partnerId,
          refundId,
          couponIds,
          reason: terms.reason,
          note: terms.note,
          forced: terms.forced,
        },
      }) as const;
    // The purchase's own refusals first (not found, not paid, a coupon not its own or already refunded), then each coupon's.
    if (terms.couponIds) {
      purchaseDecider.decide(decide(terms.couponIds, '-'), purchase, now);
      for (const couponId of terms.couponIds) await this.check(couponId, caller.partnerId, terms.forced, now);
    } else if (purchase.status === 'none' || purchase.partnerId !== caller.partnerId) throw new NotFound('purchase not found');
    const couponIds =
      terms.couponIds ??
      (await this.refundable(purchase.status === 'fulfilled' ? refundableCoupons(purchase) : [], caller.partnerId, terms.forced, now));
    if (couponIds.length === 0) purchaseDecider.decide(decide([], '-'), purchase, now);
    const refundId = this.ids.short();
    // The refund's line to come, dated now (see `handleDatedCommand`).
    const requested = await handleDatedCommand(this.store, purchaseStream(purchaseId), purchaseDecider, decide(couponIds, refundId), {
      now,
      metadata: caller,
    });
    await this.steps.arm(purchaseId, refundId, caller.partnerId);
    const { position } = await this.steps.settle(purchaseId, refundId, caller);
    return { refundId, position: position ?? requested.position! };
  }

  /** The coupons among `couponIds` the rules let be refunded now. */
  private async refundable(couponIds: string[], partnerId: string, forced: boolean, now: Date): Promise<string[]> {
    const open: string[] = [];
    for (const couponId of couponIds) if ((await this.refusal(couponId, partnerId, forced, now)) === null) open.push(couponId);
    return open;
  }

  private async check(couponId: string, partnerId: string, forced: boolean, now: Date): Promise<void> {
    const refusal = await this.refusal(couponId, partnerId, forced, now);
    if (refusal) throw refusal;
  }

  /** Why the coupon cannot be held for a refund now (its decider's refusal), or null. */
  private async refusal(couponId: string, partnerId: string, forced: boolean, now: Date): Promise<Error | null> {
    const { state } = await loadAggregate(this.store, couponStream(couponId), couponDecider);
    try {
      couponDecider.decide({ type: 'StartRefund', data: { couponId, partnerId, refundId: '', forced } }, state, now);
      return null;
    } catch (error) {
      if (error instanceof CouponNotRefundable)
        return new ValidationFailed(
          [
            {
              type: 'invalid',
              resource: 'refund',
              field: 'coupon_ids',
              // eslint-disable-next-line no-restricted-syntax -- a reason of ours (REFUND_REASONS)
              message: `names a coupon that cannot be refunded: ${error.reason}`,
            },
          ],
          // eslint-disable-next-line no-restricted-syntax -- a reason of ours (REFUND_REASONS)
          `coupon_ids names a coupon that cannot be refunded: ${error.reason}`,
        );
      return error as Error;
    }
  }
}
