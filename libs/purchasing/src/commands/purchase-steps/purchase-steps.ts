import {
  AlreadyCharging,
  CannotFulfil,
  Clock,
  CommandCaller,
  CommandOutcome,
  CommandPart,
  datedUnit,
  decideCommands,
  DomainError,
  DomainEvent,
  EventStore,
  fold,
  handleCommands,
  PaymentGateway,
  runWorkflow,
  Scheduler,
  ServiceUnavailable,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { chargeLockDecider, chargeLockStream } from '../../domain/charge-lock/charge-lock';
import { HoldLapsed, Inventory, inventoryDecider } from '../../domain/inventory/inventory.decider';
import { partnerInventoryStream } from '../../domain/inventory/inventory.events';
import { keyedPurchasesDecider, keyedPurchasesStream } from '../../domain/purchase/keyed-purchases';
import { purchaseDecider } from '../../domain/purchase/purchase.decider';
import { PurchaseEvent, purchaseStream } from '../../domain/purchase/purchase.events';
import {
  PurchaseWorkflowCommand,
  PurchaseWorkflowInput,
  PurchaseAnswer,
  PurchaseStarted,
  purchaseWorkflow,
  PurchaseWorkflowState,
  StoredCardPurchaseStarted,
} from '../../domain/purchase-workflow/purchase.workflow';
import { CouponCodes } from './coupon-codes';
import { CouponIssuer, PartnerContext } from './coupon-issuer';
import { holdAs } from './partner-inventory';
import { armPurchaseRecovery } from './purchase-recovery-job';
import { PurchaseOutcome } from './purchase-outcome';
import { ResaleSteps } from './resale-steps';

/** The refund's idempotency key: one refund per purchase, whoever asks and however often. */
export const refundKey = (purchaseId: string) => `${purchaseId}-refund`;

type Caller = CommandCaller & { partnerId: string };
type Command = PurchaseWorkflowCommand;
type Input = PurchaseWorkflowInput;

const logger = new Logger('Purchase');

/**
 * What a dry run of a stored-card purchase foresees: the charge it would ask for, with the deal's
 * inventory as its hold would leave it; or the refusal the purchase would answer.
 */
export type PurchasePreviewAnswer =
  { outcome: 'would_charge'; inventory: Inventory; amountCents: number } | { outcome: 'refused'; error: Error };

/**
 * Carries the purchase workflow out: each command it asks for, through `handleCommand` on its
 * aggregate's stream, the payment gateway or the scheduler, turned into the input it leads to. A
 * decider's refusal comes back as `StepRefused`, any other failure as `StepFailed`: the workflow
 * says what either means.
 */
@Injectable()
export class PurchaseSteps {
  constructor(
    private readonly store: EventStore,
    private readonly gateway: PaymentGateway,
    private readonly coupons: CouponIssuer,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly resale: ResaleSteps,
  ) {}

  /** Runs one purchase from `start` to its answer, its events recorded as `caller`'s. */
  async run(start: PurchaseStarted, caller: Caller, startedAt: Date = this.clock.now()): Promise<PurchaseAnswer> {
    // The coupons' codes drawn ahead, for their issue.
    let codes: Map<string, CouponCodes> | undefined;
    const { answer } = await this.carryOut(start, caller, startedAt, async (command, context) => {
      if (command.type !== 'DrawCouponImages') return this.perform(command, context, codes);
      codes = this.coupons.drawQrCodesAhead(command.data.purchaseId, command.data.quantity);
      return null;
    });
    if (!answer) throw new Error(`the purchase workflow of ${start.data.purchaseId} ended without an answer`);
    return answer;
  }

  /**
   * A dry run of a stored-card purchase: the same workflow from `start`, its start's unit decided
   * by the same deciders on the streams as they are (`decideCommands`) and written nowhere, up to
   * the charge it would ask for, which is not made. Answers what was foreseen, or the refusal the
   * purchase would answer.
   */
  async preview(start: StoredCardPurchaseStarted, caller: Caller, startedAt: Date): Promise<PurchasePreviewAnswer> {
    let held: Inventory | null = null;
    let charge: { amountCents: number } | null = null;
    const { answer } = await this.carryOut(start, caller, startedAt, async (command, context) => {
      switch (command.type) {
        case 'StartPurchase':
          held = await this.startPurchase(command, context, decideCommands);
          return { type: 'PurchaseStartWritten', data: {} };
        case 'DrawCouponImages':
          return null;
        case 'Charge':
          charge = { amountCents: command.data.amountCents };
          return null;
        default:
          throw new Error(`a dry run of purchase ${start.data.purchaseId} reached ${command.type}`);
      }
    });
    if (answer) {
      if (answer.outcome === 'refused' || answer.outcome === 'failed') return { outcome: 'refused', error: answer.error };
      throw new Error(`a dry run of purchase ${start.data.purchaseId} was answered ${answer.outcome}`);
    }
    if (!held || !charge) throw new Error(`a dry run of purchase ${start.data.purchaseId} ended before its charge`);
    return { outcome: 'would_charge', inventory: held, amountCents: (charge as { amountCents: number }).amountCents };
  }

  /**
   * Carries the purchase workflow out from `start`, each command by `step`: a decider's refusal
   * comes back to the workflow as `StepRefused`, any other failure as `StepFailed`.
   */
  private async carryOut(
    start: PurchaseStarted,
    caller: Caller,
    startedAt: Date,
    step: (command: Command, context: PartnerContext) => Promise<Input | null>,
  ): Promise<PurchaseWorkflowState> {
    // The commands one input asks for share one context (their events then share one metadata object).
    let context: PartnerContext = { now: startedAt, metadata: caller };
    const perform = async (command: Command, now: Date): Promise<Input | null> => {
      if (context.now !== now) context = { now, metadata: caller };
      if (command.type === 'DrawCouponImages') return step(command, context);
      try {
        return await step(command, context);
      } catch (error) {
        // The sale refused for its units: its hold lapsed (fresh units may take its place), or none are left.
        if (error instanceof CannotFulfil && command.type === 'FinishSale')
          return { type: error instanceof HoldLapsed ? 'HoldLapsed' : 'UnitsGone', data: { error } };
        const failed = command.type;
        return error instanceof DomainError
          ? { type: 'StepRefused', data: { step: failed, error } }
          : {
              type: 'StepFailed',
              data: { step: failed, error: error instanceof Error ? error : new Error(String(error)), at: this.clock.now().getTime() },
            };
      }
    };
    return runWorkflow(purchaseWorkflow, start, perform, this.clock, startedAt);
  }

  /** Runs a sale (a claim, a resale) to its answer: the purchase sold, or its refusal or failure thrown. */
  async complete(start: PurchaseStarted, caller: Caller): Promise<PurchaseOutcome> {
    const answer = await this.run(start, caller);
    if (answer.outcome === 'sold') return { purchaseId: answer.purchaseId, position: answer.position };
    if (answer.outcome === 'settled') throw new Error(`purchase ${answer.purchaseId}: a sale was answered as a settling`);
    throw answer.error;
  }

  /**
   * Writes a stored-card purchase's start as one unit: the user's charge lock taken, the purchase
   * reserved, its units held (in the turns of the deal's inventory, with the purchases waiting on
   * it), and its key's entry. A lock still held by a purchase already settled (fulfilled, or its
   * non-payment recorded) is one whose end was not written (a write failed, a process died): the
   * unit then ends it before taking it, rather than refusing the user's purchases until it lapses.
   * A purchase still open keeps it, charged or not: a retry of it without a key must not charge again.
   */
  private async startPurchase(
    command: Extract<Command, { type: 'StartPurchase' }>,
    context: PartnerContext,
    decide: typeof handleCommands = handleCommands,
  ): Promise<Inventory> {
    const { lock, reserve, hold, keyed } = command.data;
    const { partnerId } = context.metadata;
    const lockStream = chargeLockStream(lock.userId);
    const parts: CommandPart[] = [
      // The charge's start is its line to come, dated now: the test clock's record of it goes with it (see `datedUnit`).
      { streamId: lockStream, decider: chargeLockDecider, command: { type: 'BeginCharge', data: lock } },
      {
        streamId: purchaseStream(reserve.purchaseId),
        decider: purchaseDecider,
        command: { type: 'ReservePurchase', data: reserve },
        freshStream: true,
      },
      {
        streamId: partnerInventoryStream(hold.dealId, partnerId),
        decider: inventoryDecider,
        command: await holdAs(this.store, { type: 'HoldUnits', data: hold }, partnerId),
        lane: true,
      },
    ];
    // A new run's first purchase: the key's stream is new but for a run the store forgot.
    if (keyed)
      parts.push({
        streamId: keyedPurchasesStream(keyed.keyId),
        decider: keyedPurchasesDecider,
        command: { type: 'StartKeyedPurchase', data: { purchaseId: lock.purchaseId, attempt: keyed.attempt } },
        freshStream: keyed.attempt === 0,
      });
    const unit = datedUnit(parts, context.now);
    let outcomes;
    try {
      outcomes = await decide(this.store, unit, context);
    } catch (error) {
      if (!(error instanceof AlreadyCharging) || error.holder === null || !(await this.settled(error.holder))) throw error;
      const end = { type: 'EndCharge' as const, data: { userId: lock.userId, purchaseId: error.holder } };
      outcomes = (await decide(this.store, [{ streamId: lockStream, decider: chargeLockDecider, command: end }, ...unit], context)).slice(
        1,
      );
    }
    const held = outcomes[2] as CommandOutcome<Inventory, DomainEvent>;
    if (held.events.length) return held.state;
    // Held already, with its purchase not reserved: only a store that appends stream by stream
    // leaves that (a unit cut between its writes). Nothing was charged; a repeat with the same key
    // goes on under a purchase id of its own.
    if (held.state.status !== 'stocked' || !held.state.holds.has(hold.holdId))
      throw new ServiceUnavailable('the units of the purchase were held and given back by an earlier try', 1);
    return held.state;
  }

  /** Whether a purchase is settled: neither unknown nor still open. */
  private async settled(purchaseId: string): Promise<boolean> {
    const purchase = fold(purchaseDecider, (await this.store.readStream(purchaseStream(purchaseId))) as unknown as PurchaseEvent[]);
    return purchase.status !== 'none' && purchase.status !== 'reserved';
  }

  private async perform(command: Command, context: PartnerContext, codes: Map<string, CouponCodes> | undefined): Promise<Input | null> {
    const none = {} as Record<string, never>;
    // The purchase's partner (its caller): a sandbox's purchase takes units from its own inventory of the deal.
    const { partnerId } = context.metadata;
    switch (command.type) {
      case 'StartPurchase':
        await this.startPurchase(command, context);
        return { type: 'PurchaseStartWritten', data: none };
      case 'UndoStart': {
        const { lock, hold, nonPayment } = command.data;
        await handleCommands(
          this.store,
          [
            {
              streamId: partnerInventoryStream(hold.dealId, partnerId),
              decider: inventoryDecider,
              command: { type: 'ReleaseHold', data: { ...hold, reason: 'payment_failed' } },
              lane: true,
            },
            {
              streamId: purchaseStream(nonPayment.purchaseId),
              decider: purchaseDecider,
              command: { type: 'RecordNonPayment', data: nonPayment },
            },
            { streamId: chargeLockStream(lock.userId), decider: chargeLockDecider, command: { type: 'EndCharge', data: lock } },
          ],
          context,
        );
        return { type: 'StartUndone', data: none };
      }
      case 'Charge': {
        const { purchaseId, cardToken, amountCents, description } = command.data;
        let outcome;
        try {
          outcome = await this.gateway.charge({ token: cardToken, amountCents, idempotencyKey: purchaseId, description });
        } catch (error) {
          return { type: 'ChargeUnanswered', data: { reason: (error as Error)?.message ?? String(error) } };
        }
        if (outcome.status === 'approved') return { type: 'ChargeApproved', data: { chargeId: outcome.chargeId } };
        return { type: outcome.status === 'declined' ? 'ChargeDeclined' : 'ChargeFailed', data: { reason: outcome.reason } };
      }
      case 'ArmRecovery': {
        const armed = await armPurchaseRecovery(this.scheduler, command.data.purchaseId, new Date(command.data.at));
        return { type: 'RecoveryArmed', data: { armed } };
      }
      case 'LookUpCharge': {
        const charge = await this.gateway.chargeOutcome(command.data.purchaseId);
        return { type: 'ChargeLookedUp', data: { charge } };
      }
      case 'LookUpRefund': {
        const refund = await this.gateway.refundOutcome(refundKey(command.data.purchaseId));
        return { type: 'RefundLookedUp', data: { refunded: refund?.status === 'refunded' } };
      }
      case 'ReadPurchase': {
        const { reserved, state } = await this.coupons.readPurchase(command.data.purchaseId);
        const sold = state.status === 'fulfilled' ? { holdId: state.holdId, couponIds: state.couponIds, userId: state.holder } : null;
        return { type: 'PurchaseRead', data: { deal: reserved.deal, quantity: reserved.quantity, holdId: reserved.holdId, sold } };
      }
      case 'FinishSale':
        return { type: 'SaleWritten', data: { position: await this.coupons.finishSale(command.data, context, codes) } };
      case 'Refund': {
        const { purchaseId, chargeId, amountCents } = command.data;
        const refund = await this.gateway.refund({ chargeId, amountCents, idempotencyKey: refundKey(purchaseId) });
        return refund.status === 'refunded'
          ? { type: 'ChargeRefunded', data: none }
          : { type: 'RefundFailed', data: { reason: refund.reason } };
      }
      case 'Wait':
        await new Promise((resolve) => setTimeout(resolve, command.data.ms));
        return { type: 'Waited', data: none };
      case 'Report':
        if (command.data.level === 'error') logger.error(command.data.message);
        else logger.warn(command.data.message);
        return null;
      case 'DrawCouponImages':
        return null;
      case 'ClaimTransactionReference':
      case 'CheckResaleDeal':
      case 'StartResale':
      case 'ReleaseTransactionReference':
        return this.resale.perform(command, context);
    }
  }
}
