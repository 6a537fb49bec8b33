import {
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  IdGenerator,
  loadAggregate,
  LogPosition,
  NotFound,
  OPERATOR,
  PaymentGateway,
  Scheduler,
  ValidationFailed,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { couponDecider, CouponNotRefundable } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';
import { Purchase, purchaseDecider, refundableCoupons } from '../../domain/purchase/purchase.decider';
import { purchaseStream } from '../../domain/purchase/purchase.events';
import { RefundReason } from '../../domain/refund/refund-rules';

/** The scheduled job that ends a refund a process left pending (its processor answer lost, or the process stopped). */
export const SETTLE_REFUND_JOB = 'settle-refund';
/** How long after its request a refund is settled by its job when its own request did not end it. */
export const SETTLE_AFTER_MS = 30_000;
/** A refund the processor did not answer is asked again: a minute, doubling, at most half an hour. */
const retryDelayMs = (attempt: number) => Math.min(60_000 * 2 ** Math.max(0, attempt - 1), 30 * 60_000);

/** The processor's idempotency key of a refund: one per refund, however often it is asked. */
const processorKey = (refundId: string) => `refund-${refundId}`;

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
    readonly caller: CommandCaller & { partnerId: string },
  ) {
    super();
  }
}

/**
 * A refund's steps, each idempotent so that its settling job can run them again: the decision on
 * the purchase (which coupons, how much), its coupons held from redemption, the money back through
 * the processor under the refund's own key (a claimed reservation's the partner took itself, so it
 * is recorded as paid back at once), the outcome on the purchase, its coupons voided or given back.
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
   * Takes the refund from its decision to its end, as far as it can now: `pending` when the processor
   * gave no answer (its job asks again later). A coupon that can no longer be held (redeemed since
   * the request was checked) fails the refund, with the reason.
   */
  async settle(
    purchaseId: string,
    refundId: string,
    caller: CommandCaller & { partnerId: string },
  ): Promise<{ state: 'succeeded' | 'failed' | 'pending'; position: LogPosition | null }> {
    const purchase = await this.purchase(purchaseId);
    const refund = purchase.refunds.find((r) => r.refundId === refundId);
    if (!refund) return { state: 'failed', position: null };
    let position: LogPosition | null = null;
    const context = () => ({ now: this.clock.now(), metadata: caller });
    const wrote = (outcome: { position: LogPosition | null }) => (position = outcome.position ?? position);
    // The refund as it stands: as read, then as each recorded outcome leaves it.
    let ended: typeof refund = refund;
    const record = async (outcome: { outcome: 'succeeded'; processorRefundId: string | null } | { outcome: 'failed'; reason: string }) => {
      const recorded = await handleCommand(
        this.store,
        purchaseStream(purchaseId),
        purchaseDecider,
        { type: 'RecordRefundOutcome', data: { purchaseId, partnerId: caller.partnerId, refundId, ...outcome } },
        context(),
      );
      wrote(recorded);
      ended = recorded.state.refunds.find((r) => r.refundId === refundId) ?? ended;
    };
    if (refund.state === 'pending') {
      const refusal = await this.holdCoupons(refund.couponIds, refundId, caller.partnerId, refund.forced, context, wrote);
      if (refusal) await record({ outcome: 'failed', reason: refusal });
      // A claimed reservation's money is the partner's to give back; a free coupon has none.
      else if (purchase.chargeId === null || refund.amountCents === 0) await record({ outcome: 'succeeded', processorRefundId: null });
      else {
        const answer = await this.gateway.refund({
          chargeId: purchase.chargeId,
          amountCents: refund.amountCents,
          idempotencyKey: processorKey(refundId),
        });
        if (answer.status === 'error') {
          this.logger.warn(`refund ${refundId}: the processor did not answer (${answer.reason}); asked again later`);
          return { state: 'pending', position };
        }
        await record(
          answer.status === 'refunded'
            ? { outcome: 'succeeded', processorRefundId: answer.refundId }
            : { outcome: 'failed', reason: answer.reason },
        );
      }
    }
    if (ended.state !== 'pending')
      for (const couponId of ended.couponIds)
        wrote(
          await handleCommand(
            this.store,
            couponStream(couponId),
            couponDecider,
            { type: 'FinishRefund', data: { couponId, refundId, outcome: ended.state === 'succeeded' ? 'succeeded' : 'released' } },
            context(),
          ),
        );
    return { state: ended.state, position };
  }

  /** Holds each coupon for the refund; the first refusal's reason, the coupons held so far given back, or null when all are held. */
  private async holdCoupons(
    couponIds: string[],
    refundId: string,
    partnerId: string,
    forced: boolean,
    context: () => { now: Date; metadata: CommandCaller },
    wrote: (outcome: { position: LogPosition | null }) => void,
  ): Promise<string | null> {
    for (const couponId of couponIds) {
      try {
        wrote(
          await handleCommand(
            this.store,
            couponStream(couponId),
            couponDecider,
            { type: 'StartRefund', data: { couponId, partnerId, refundId, forced } },
            context(),
          ),
        );
      } catch (error) {
        if (!(error instanceof ValidationFailed)) throw error;
        return `${couponId}: ${error instanceof CouponNotRefundable ? error.reason : error.message}`;
      }
    }
    return null;
  }
}

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
    } else if (purchase.status === 'none' || purchase.partnerId !== caller.partnerId)
      throw new NotFound(`purchase ${purchaseId} not found`);
    const couponIds = terms.couponIds ?? (await this.refundable(refundableCoupons(purchase), caller.partnerId, terms.forced, now));
    if (couponIds.length === 0) purchaseDecider.decide(decide([], '-'), purchase, now);
    const refundId = this.ids.short();
    const requested = await handleCommand(this.store, purchaseStream(purchaseId), purchaseDecider, decide(couponIds, refundId), {
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
          [{ type: 'invalid', resource: 'refund', field: 'coupon_ids', message: `names ${couponId}: ${error.reason}` }],
          `coupon_ids names ${couponId}: ${error.reason}`,
        );
      return error as Error;
    }
  }
}
