import {
  EventStore,
  handleCommand,
  loadAggregate,
  loadCachedAggregate,
  OPERATOR,
  PaymentGateway,
  Scheduler,
  ViewStore,
} from '@deals/kernel';
import { Clock, inTimeOf, testClockOf } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { CouponIssuer } from '../commands/purchase-steps/coupon-issuer';
import { armGiftMail } from '../commands/purchase-steps/gift-mail-job';
import { armPurchaseRecovery, RECOVER_PURCHASE_JOB, recoveryRetryDelayMs } from '../commands/purchase-steps/purchase-recovery-job';
import { PurchaseSteps } from '../commands/purchase-steps/purchase-steps';
import { RefundSteps, SETTLE_AFTER_MS } from '../commands/refund-purchase/refund-purchase.command';
import { CHARGE_LOCK_MS } from '../domain/charge-lock/charge-lock';
import { inventoryDecider, unitsOf } from '../domain/inventory/inventory.decider';
import { OpenHolds } from '../queries/open-holds';
import { HOLD_TTL_MS, partnerInventoryStream, purchasesOfHold, replacementHoldId } from '../domain/inventory/inventory.events';
import { PurchaseEvent, PurchaseReserved, purchaseStream } from '../domain/purchase/purchase.events';
import { cardPurchaseLeftOpen } from '../domain/purchase-workflow/card-purchase-settling';
import { transactionReferenceDecider, transactionReferenceStream } from '../domain/purchase/resale-claim';
import { PURCHASE_DETAILS, PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';
import { REFUND_DETAILS, RefundDetails } from '../projections/refund-details/refund-details.projection';

const SYSTEM = { ...OPERATOR, actor: 'system:recovery' };

/**
 * After a crash, finishes the card purchases a process left between reserving and recording the
 * payment, by what the processor recorded under the purchase's idempotency key: approved → sell
 * the units and issue the coupons (no charge without coupons); declined or failed → release; no
 * charge at all → release (nothing was taken); approved but already refunded (its units could not
 * be sold) → release; approved but the units sold out while the service was down → refund and
 * release. Never charges. Each purchase on its own: one that fails is logged and retried at the
 * next start. Then issues the coupons of every fulfilled purchase (any path) whose process stopped
 * before all its coupons were issued (and, before that, finishes every claim or reseller sale
 * stopped between taking its units and its record: `finishInterruptedSales`). Last, releases every open hold no purchase was recorded for:
 * a reseller sale takes its hold before it records its purchase, so a process stopped between the
 * two leaves a hold nobody owns. Such a hold would lapse by itself within five minutes; this gives
 * its units back at once (a retry of the sale then takes a fresh hold). Refunds still pending (a
 * process stopped before its processor answered, or with their settling job in its memory) get
 * their settling job again: it asks the processor under the refund's own key, so none pays twice.
 *
 * When other processes may be buying at the same moment (the distributed worker starting beside
 * running APIs), a purchase younger than the charge lock may still be in their hands: it is left
 * to a job at the end of that lock, which finishes it only if it is still open then; a hold younger
 * than the lock is likewise left alone (its purchase may be being written; it lapses anyway).
 */
@Injectable()
export class RecoverInterruptedPayments {
  private readonly logger = new Logger('Recovery');

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly gateway: PaymentGateway,
    private readonly coupons: CouponIssuer,
    private readonly steps: PurchaseSteps,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly openHolds: OpenHolds,
    private readonly refunds: RefundSteps,
  ) {
    // Settles, at the end of its charge lock, a purchase another process may still have been
    // charging, or whose charge had no answer. Until the processor answers, it is tried again later
    // (a new job each time: a running job cannot re-arm its own id on every scheduler).
    this.scheduler.handle(RECOVER_PURCHASE_JOB, async (job) => {
      const purchaseId = String(job.data.purchaseId);
      const attempt = Number(job.data.attempt ?? 0) + 1;
      try {
        await this.settleNow(purchaseId);
      } catch (error) {
        if (!(await this.retryLater(purchaseId, attempt, error as Error))) throw error;
      }
    });
  }

  /**
   * Settles one card purchase still open (reserved for a card, its payment not recorded) from its
   * stream and the processor's record, now: its job's work, and a keyed request's when run again
   * after its process died.
   */
  async settleNow(purchaseId: string): Promise<void> {
    const history = await this.history(purchaseId);
    const open = cardPurchaseLeftOpen(history);
    if (open) this.logger.warn(`recovered purchase ${purchaseId}: ${await this.settle(open.data.partnerId, purchaseId, history)}`);
  }

  async run({ othersMayBeBuying }: { othersMayBeBuying: boolean }): Promise<number> {
    let recovered = 0;
    // The view names the purchases reserved for a card; each is decided from its own stream.
    const candidates = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, {
      fulfillmentState: 'reserved',
      paymentIntent: { $ne: null },
    });
    for (const { _id: purchaseId } of candidates) {
      try {
        const history = await this.history(purchaseId);
        const open = cardPurchaseLeftOpen(history);
        if (!open) continue;
        // A test clock's purchase in the clock's time: its jobs wait on the clock, its records are dated by
        // it (its clock unread, the purchase waits for the next start; the others go on).
        recovered += await inTimeOf(this.store, open.data.partnerId, async () => {
          const settledAt = Date.parse(open.data.reservedAt) + CHARGE_LOCK_MS;
          if (othersMayBeBuying && settledAt > this.clock.now().getTime()) {
            // Not finished now even if the job cannot be armed: another process may be charging it.
            await armPurchaseRecovery(this.scheduler, purchaseId, new Date(settledAt));
            return 0;
          }
          // One purchase that cannot be finished now must not keep the others (or the service) down.
          try {
            this.logger.warn(`recovered purchase ${purchaseId}: ${await this.settle(open.data.partnerId, purchaseId, history)}`);
            return 1;
          } catch (error) {
            // The processor (or the log) could not be asked: tried again by a job, as a charge with
            // no answer is, and at the next start if the job cannot be armed.
            await this.retryLater(purchaseId, 1, error as Error);
            return 0;
          }
        });
      } catch (error) {
        this.logger.error(`purchase ${purchaseId}: not settled now; tried again at the next start`, error as Error);
      }
    }
    recovered += await this.finishInterruptedSales();
    const owing = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { couponsOwed: { $gt: 0 } });
    for (const purchase of owing) {
      try {
        await inTimeOf(this.store, purchase.partnerId, () =>
          this.coupons.issueOwed(purchase._id, { ...SYSTEM, partnerId: purchase.partnerId }),
        );
        this.logger.warn(`issued the ${purchase.couponsOwed} coupon(s) purchase ${purchase._id} was owed`);
        recovered++;
      } catch (error) {
        this.logger.error(
          `the coupons owed to purchase ${purchase._id} could not be issued; tried again at the next start`,
          error as Error,
        );
      }
    }
    recovered += await this.rearmPendingRefunds();
    return recovered + (await this.releaseAbandonedHolds(othersMayBeBuying));
  }

  /** Arms the settling job of every refund still pending, due when its own would have been (now, if that has passed). */
  private async rearmPendingRefunds(): Promise<number> {
    const pending = await this.views.find<RefundDetails>(REFUND_DETAILS, { state: 'pending' });
    const now = this.clock.now().getTime();
    for (const refund of pending) {
      // A test clock's refunds settle by its jobs, which wait on its stream.
      if (testClockOf(refund.partnerId) !== null) continue;
      const dueIn = Math.max(0, Date.parse(refund.createdAt) + SETTLE_AFTER_MS - now);
      await this.refunds.arm(refund.purchaseId, refund._id, refund.partnerId, dueIn);
      this.logger.warn(`refund ${refund._id} of purchase ${refund.purchaseId} is pending: settled by its job`);
    }
    return pending.length;
  }

  /**
   * Finishes the sales a process left half-recorded, where the buyer has paid someone already:
   * - a claim stopped between selling the reservation's units and recording the claim (the partner
   *   took the payment; the sale names the buyer): recorded for that buyer, as the claim's retry
   *   would. A claim's sale is one unit, so only a store that appends stream by stream or a log
   *   from step-by-step sales holds one; left, its units stay sold to no purchase;
   * - a reseller's sale stopped after its units were taken (its start's unit written, its sale's
   *   not; its reference marked selling): recorded with the terms kept under its
   *   `transaction_reference`, as the reseller's retry would.
   * Both writes are the retries' own, so a process still finishing one beside this changes nothing.
   */
  private async finishInterruptedSales(): Promise<number> {
    let finished = 0;
    // Only the sales in progress (the view marks them): not every reservation ever made. Released
    // ones among them too: a claim of a released reservation takes fresh units (its `-r` hold).
    const reservations = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { saleInProgress: true });
    for (const purchase of reservations) {
      // Card purchases are settled above, from the processor's record (the view never marks them).
      if (purchase.paymentIntent || purchase.fulfillmentState === 'fulfilled') continue;
      const caller = { ...SYSTEM, partnerId: purchase.partnerId };
      try {
        const reference = purchase.transactionReference;
        if (reference !== undefined) {
          const { state: claim } = await loadAggregate(
            this.store,
            transactionReferenceStream(purchase.partnerId, reference),
            transactionReferenceDecider,
          );
          if (claim.status !== 'selling' || claim.purchaseId !== purchase._id || !claim.terms) continue;
          const terms = claim.terms;
          await inTimeOf(this.store, purchase.partnerId, () =>
            this.steps.complete(
              {
                type: 'ResaleStarted',
                data: { purchaseId: purchase._id, partnerId: purchase.partnerId, transactionReference: reference, terms },
              },
              caller,
            ),
          );
          this.logger.warn(`finished reseller sale ${purchase._id} (${reference}): its units were taken before a stop`);
          finished++;
          continue;
        }
        // The reservation's hold, or the one a claim after its lapse or release took in its place (`-r`).
        const holds =
          purchase.fulfillmentState === 'released' ? [replacementHoldId(purchase._id)] : [purchase._id, replacementHoldId(purchase._id)];
        // Read from its cached fold or snapshot, with the closed holds named here; a sandbox's from its own inventory of the deal.
        const { state: inventory } = await loadCachedAggregate(
          this.store,
          partnerInventoryStream(purchase.deal.dealId, purchase.partnerId),
          inventoryDecider,
          holds,
        );
        const sale = holds.map((holdId) => unitsOf(inventory).closed.get(holdId)).find((closed) => typeof closed === 'object');
        const buyer = typeof sale === 'object' ? sale.soldTo : null;
        const prefix = `${purchase.partnerId}/`;
        if (!buyer?.startsWith(prefix)) continue;
        const userId = buyer.slice(prefix.length);
        await inTimeOf(this.store, purchase.partnerId, () =>
          this.steps.complete(
            {
              type: 'ReservationClaimStarted',
              data: { purchaseId: purchase._id, partnerId: purchase.partnerId, userId, maxPerUser: undefined },
            },
            caller,
          ),
        );
        this.logger.warn(`finished the claim of reservation ${purchase._id} for user ${userId}: its units were sold before a stop`);
        finished++;
      } catch (error) {
        this.logger.error(`the interrupted sale of ${purchase._id} could not be finished; tried again at the next start`, error as Error);
      }
    }
    return finished;
  }

  /** Arms attempt `attempt` of settling the purchase, after its back-off; whether it was armed. */
  private async retryLater(purchaseId: string, attempt: number, error: Error): Promise<boolean> {
    const retryAt = new Date(this.clock.now().getTime() + recoveryRetryDelayMs(attempt));
    const armed = await armPurchaseRecovery(this.scheduler, purchaseId, retryAt, attempt);
    this.logger.error(
      `purchase ${purchaseId} could not be settled (${error.message}); tried again ${armed ? `at ${retryAt.toISOString()}` : 'at the next start'}`,
    );
    return armed;
  }

  private async releaseAbandonedHolds(othersMayBeBuying: boolean): Promise<number> {
    let released = 0;
    for (const { dealId, holdId, expiresAt, partnerId } of await this.openHolds.list()) {
      try {
        // A test clock's hold by the clock's time.
        released += await inTimeOf(this.store, partnerId, async () => {
          const now = this.clock.now();
          if (othersMayBeBuying && expiresAt - HOLD_TTL_MS + CHARGE_LOCK_MS > now.getTime()) return 0;
          if (await this.anyPurchaseRecorded(purchasesOfHold(holdId))) return 0;
          await handleCommand(
            this.store,
            partnerInventoryStream(dealId, partnerId),
            inventoryDecider,
            { type: 'ReleaseHold', data: { dealId, holdId, reason: 'abandoned' } },
            { now, metadata: SYSTEM },
          );
          this.logger.warn(`released hold ${holdId} of deal ${dealId}: no purchase was recorded for it`);
          return 1;
        });
      } catch (error) {
        this.logger.error(`hold ${holdId} of deal ${dealId} could not be released; it lapses by itself`, error as Error);
      }
    }
    return released;
  }

  /**
   * Whether any of `purchaseIds` has a purchase in the log. The view answers first (a document
   * there means its events are in the log: views only follow it), so that the log is read only
   * for holds without one; a start with thousands of open holds took ~90 µs a hold reading each
   * purchase's stream.
   */
  private async anyPurchaseRecorded(purchaseIds: string[]): Promise<boolean> {
    for (const id of purchaseIds) if (await this.views.findById(PURCHASE_DETAILS, id)) return true;
    for (const id of purchaseIds) if ((await this.store.readStream(purchaseStream(id), 0)).length > 0) return true;
    return false;
  }

  /** The purchase's stream as written. */
  private async history(purchaseId: string): Promise<PurchaseEvent[]> {
    return (await this.store.readStream(purchaseStream(purchaseId), 0)) as unknown as PurchaseEvent[];
  }

  /**
   * Settles the purchase by the purchase workflow, its state folded from `history` and its next
   * step decided from what the processor recorded; what it did, for the log. A step that fails
   * throws, to be tried again.
   */
  private async settle(partnerId: string, purchaseId: string, history: PurchaseEvent[]): Promise<string> {
    const answer = await this.steps.run({ type: 'SettlingStarted', data: { purchaseId, history } }, { ...SYSTEM, partnerId });
    if (answer.outcome !== 'settled' && answer.outcome !== 'sold') throw answer.error;
    // A gift its settling sold has its mail armed as its own run would have (in its test clock's time too).
    const { gift } = (history[0] as PurchaseReserved).data;
    if (gift && (await this.coupons.readPurchase(purchaseId)).state.status === 'fulfilled')
      await inTimeOf(this.store, partnerId, () => armGiftMail(this.scheduler, purchaseId, partnerId, gift, this.clock.now()));
    return answer.outcome === 'settled' ? answer.summary : 'sold';
  }
}
