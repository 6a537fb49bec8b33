import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import {
  AlreadyCharging,
  CannotFulfil,
  Clock,
  CommandCaller,
  Declined,
  DomainError,
  EventStore,
  handleCommand,
  IdGenerator,
  LogPosition,
  NotFound,
  PaymentFailed,
  PaymentGateway,
  PaymentOutcomeUnknown,
  Scheduler,
  ValidationFailed,
  IdempotentRun,
} from '@deals/kernel';
import { Logger } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CHARGE_LOCK_MS, chargeLockDecider, chargeLockStream } from '../domain/charge-lock/charge-lock';
import { ForBuyer, inventoryDecider } from '../domain/inventory/inventory.decider';
import { buyerKey, holdExpiry, inventoryStream } from '../domain/inventory/inventory.events';
import { purchaseDecider, RecordPayment } from '../domain/purchase/purchase.decider';
import { dealSnapshot, DealSnapshot, purchaseStream } from '../domain/purchase/purchase.events';
import { KeyedPurchaseStartedBefore, keyedPurchasesDecider, keyedPurchasesStream } from '../domain/purchase/keyed-purchases';
import type { ShippingAddress } from '../domain/purchase/shipping-address';
import { CouponIssuer } from './coupon-issuer';
import { KeyedPurchases } from './keyed-purchases';
import { armPurchaseRecovery } from './recover-purchase-job';
import { armHoldRelease, disarmHoldRelease } from './release-hold-job';
import { refundUnfulfilledCharge } from './refund-unfulfilled';
import { refuseFreeCardPurchase, refuseUnchargeableAmount, refuseUnsellable, SOLD_TYPES } from './sale-rules';

type Caller = CommandCaller & { partnerId: string };

const COMPLETION_ATTEMPTS = 3;

const logger = new Logger('BuyWithStoredCard');

async function retry<T>(attempts: number, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (error instanceof DomainError || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** A stored-card purchase as the request schema reads it (or as the full purchase makes it). */
export interface StoredCardOrder {
  dealId: string;
  quantity: number;
  userId: string;
  creditCardId: string;
  /** The price the caller expects, checked against the deal's; null: the price when the units are held. */
  expectedPrice: number | null;
  sessionId: string | null;
  /** Where to ship; an address without an id gets one. */
  shipping: ShippingAddress | Omit<ShippingAddress, 'id'> | null;
}

/**
 * POST /purchases: buy with a stored card (part 4.6). The full purchase (part 4.6.1) names no
 * price: its order's `expectedPrice` is null, and the deal's price when the units are held is charged.
 */
export class BuyWithStoredCard extends Command<{ purchaseId: string; position: LogPosition | null }> {
  constructor(
    readonly order: StoredCardOrder,
    readonly caller: Caller,
    /** The request's run under its `Idempotency-Key`, which names the purchase; null without one. */
    readonly keyed: IdempotentRun | null = null,
  ) {
    super();
  }
}

/** The order with its shipping address named (an address given in this purchase gets a new id). */
function withShippingId(order: StoredCardOrder): StoredCardOrder & { shipping: ShippingAddress | null } {
  const given = order.shipping;
  if (!given) return { ...order, shipping: null };
  return { ...order, shipping: 'id' in given ? given : { id: Date.now().toString(36), ...given } };
}

/**
 * Checks the user, card, deal and price; then, one charge at a time per user: record the purchase
 * with its payment intent and hold the units together (the inventory refuses them beyond the deal's
 * per-user limit, counting the user's other holds and sales), charge the card (idempotent by purchase id),
 * and sell and issue coupons, or release the units when the card is declined or the processor fails.
 */
@CommandHandler(BuyWithStoredCard)
export class BuyWithStoredCardHandler implements ICommandHandler<BuyWithStoredCard> {
  constructor(
    private readonly store: EventStore,
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly gateway: PaymentGateway,
    private readonly coupons: CouponIssuer,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly keyed: KeyedPurchases,
  ) {}

  async execute({ order: given, caller, keyed: run }: BuyWithStoredCard) {
    // A keyed request run again answers the purchase its first run made (before any check: the
    // deal or its price may have changed since).
    const keyed = run === null ? null : await this.keyed.card(run, () => this.ids.short());
    if (keyed?.resumed) return { purchaseId: keyed.purchaseId, position: keyed.position };
    const order = withShippingId(given);
    const now = this.clock.now();
    const context = { now, metadata: caller };
    if (!(await this.accounts.user(caller.partnerId, order.userId))) throw new NotFound(`user ${order.userId} not found`);
    const card = await this.accounts.card(caller.partnerId, order.creditCardId);
    if (!card)
      throw new ValidationFailed([
        { type: 'not_found', resource: 'credit_card', field: 'credit_card_id', message: 'names no stored card' },
      ]);
    if (card.userId !== order.userId)
      throw new ValidationFailed([
        { type: 'not_owner', resource: 'credit_card', field: 'credit_card_id', message: 'is not a card of this user' },
      ]);
    const view = await this.catalog.deal(order.dealId);
    if (!view) throw new NotFound(`deal ${order.dealId} not found`);
    const deal = view.deal!;
    refuseUnsellable(view, now.getTime(), SOLD_TYPES);
    refuseFreeCardPurchase(view);
    refuseUnchargeableAmount(view, order.quantity);
    // Part 2.1: shipped goods need an address to buy (the full purchase requires its section too).
    if (deal.fulfillment_method === 'shipped' && !order.shipping) {
      throw new ValidationFailed([
        { type: 'missing_field', resource: 'shipping_address', field: 'shipping_address', message: 'is required for a shipped deal' },
      ]);
    }
    if (order.expectedPrice !== null && order.expectedPrice !== deal.current_price) {
      throw new ValidationFailed([
        {
          type: 'invalid',
          resource: 'purchase',
          field: 'expected_price_per_unit',
          message: `is ${order.expectedPrice}, but the price is now ${deal.current_price}`,
        },
      ]);
    }
    const purchaseId = keyed?.purchaseId ?? this.ids.short();
    const forBuyer: ForBuyer = { buyer: buyerKey(caller.partnerId, order.userId), maxPerBuyer: deal.max_per_user };
    const lock = chargeLockStream(order.userId);
    const endCharge = () =>
      handleCommand(
        this.store,
        lock,
        chargeLockDecider,
        { type: 'EndCharge', data: { userId: order.userId, purchaseId } },
        { now: this.clock.now(), metadata: caller },
      );
    const notPaid = (reason: string) =>
      handleCommand(
        this.store,
        purchaseStream(purchaseId),
        purchaseDecider,
        { type: 'RecordNonPayment', data: { purchaseId, partnerId: caller.partnerId, outcome: 'error', reason } },
        context,
      );
    // The lock, the purchase (with its payment intent) and the hold are written together, not one
    // after the other: they do not depend on each other, and each is a commit the purchase would
    // otherwise wait for in turn. (SQLite's log usually commits them in one transaction: its
    // thread joins the appends that reach it before it begins. One that first reads its stream,
    // an uncached lock, may reach it a little later and take the next commit.) Whichever is refused, the
    // others are undone before the refusal is answered. A crash between them can leave a hold no
    // purchase was recorded for: recovery releases it at start (`abandoned`), and it lapses with
    // its five minutes anyway.
    const snapshot = dealSnapshot(deal);
    // A keyed purchase is entered among its key's purchases in the same commit, before any charge.
    const entered =
      run !== null && keyed?.attempt != null
        ? handleCommand(
            this.store,
            keyedPurchasesStream(run.keyId),
            keyedPurchasesDecider,
            { type: 'StartKeyedPurchase', data: { purchaseId, attempt: keyed.attempt } },
            context,
            // A new run's first purchase: the key's stream is new but for a run the store forgot.
            { freshStream: keyed.attempt === 0 },
          )
        : null;
    const [locked, reserved, held, marked] = await Promise.allSettled([
      handleCommand(this.store, lock, chargeLockDecider, { type: 'BeginCharge', data: { userId: order.userId, purchaseId } }, context),
      handleCommand(
        this.store,
        purchaseStream(purchaseId),
        purchaseDecider,
        {
          type: 'ReservePurchase',
          data: {
            purchaseId,
            partnerId: caller.partnerId,
            deal: snapshot,
            quantity: order.quantity,
            holdId: purchaseId,
            reservedAt: context.now.toISOString(),
            holdExpiresAt: new Date(holdExpiry(now.getTime())).toISOString(),
            payment: { userId: order.userId, creditCardId: order.creditCardId, sessionId: order.sessionId },
            ...(order.shipping ? { shipping: order.shipping } : {}),
          },
        },
        context,
        { freshStream: true },
      ),
      handleCommand(
        this.store,
        inventoryStream(deal.id),
        inventoryDecider,
        { type: 'HoldUnits', data: { dealId: deal.id, holdId: purchaseId, quantity: order.quantity, ...forBuyer } },
        context,
      ),
      entered,
    ]);
    const holdExpiresAt = held.status === 'fulfilled' ? (held.value.events[0].data as { expiresAt: string }).expiresAt : null;
    if (locked.status === 'rejected' || reserved.status === 'rejected' || held.status === 'rejected' || marked.status === 'rejected') {
      // The lock's refusal (`already_charging`) is told first, as when the hold came after it.
      const refusal = [locked, reserved, held, marked]
        .map((r) => (r.status === 'rejected' ? (r.reason as unknown) : null))
        .find((reason) => reason !== null);
      // An undo that fails must not hide the refusal. What it leaves ends by itself: the lock after
      // CHARGE_LOCK_MS, the purchase at recovery, the hold at its expiry (its job armed then).
      const undone = await Promise.allSettled([
        locked.status === 'fulfilled' ? endCharge() : null,
        reserved.status === 'fulfilled' ? notPaid(`refused before charging: ${(refusal as Error).message}`) : null,
        holdExpiresAt !== null ? this.giveBackHold(deal.id, purchaseId, holdExpiresAt, context) : null,
      ]);
      for (const outcome of undone) {
        if (outcome.status === 'rejected')
          logger.error(`purchase ${purchaseId} was refused, and undoing one of its writes failed: ${(outcome.reason as Error).message}`);
      }
      // The key started a purchase before (its claim was lost with the store): that one is answered.
      if (run !== null && refusal instanceof KeyedPurchaseStartedBefore) {
        const earlier = await this.keyed.resume(run, refusal.purchaseIds);
        if (earlier.resumed) return { purchaseId: earlier.purchaseId, position: earlier.position };
        throw new AlreadyCharging('an earlier purchase of this Idempotency-Key stopped before its charge; send the request again');
      }
      throw refusal;
    }
    // The charge is over once the processor answers: the lock goes then, beside the sale's writes.
    let ended: Promise<unknown> | null = null;
    const chargeOver = () => (ended ??= endCharge());
    // A charge with no known outcome keeps the lock to its end, when the purchase is settled: a
    // retry meanwhile answers 409 already_charging instead of perhaps charging the card twice.
    const keepLock = () => void (ended ??= Promise.resolve());
    try {
      return await this.buy(purchaseId, order, deal, snapshot, card.token, holdExpiresAt!, forBuyer, caller, context, chargeOver, keepLock);
    } finally {
      await chargeOver();
    }
  }

  /** The hold of a purchase refused before charging, given back; if that fails, it lapses at its expiry, its job armed. */
  private async giveBackHold(dealId: string, holdId: string, expiresAt: string, context: { now: Date; metadata: Caller }) {
    try {
      await handleCommand(
        this.store,
        inventoryStream(dealId),
        inventoryDecider,
        { type: 'ReleaseHold', data: { dealId, holdId, reason: 'refused' } },
        context,
      );
    } catch (error) {
      await armHoldRelease(this.scheduler, dealId, holdId, expiresAt);
      throw error;
    }
  }

  private async releaseHold(dealId: string, holdId: string, context: { now: Date; metadata: Caller }) {
    await handleCommand(
      this.store,
      inventoryStream(dealId),
      inventoryDecider,
      { type: 'ReleaseHold', data: { dealId, holdId, reason: 'payment_failed' } },
      context,
    );
  }

  private async buy(
    purchaseId: string,
    order: ReturnType<typeof withShippingId>,
    deal: NonNullable<Awaited<ReturnType<CatalogQueries['deal']>>>['deal'] & object,
    snapshot: DealSnapshot,
    token: string,
    holdExpiresAt: string,
    forBuyer: ForBuyer,
    caller: Caller,
    context: { now: Date; metadata: Caller },
    chargeOver: () => Promise<unknown>,
    keepLock: () => void,
  ) {
    // The coupons' images are drawn on their thread while the card is charged and the units sold,
    // not only from the sale on, so that the answer rarely waits for them.
    const codes = this.coupons.drawQrCodesAhead(purchaseId, order.quantity);
    const charged = this.gateway.charge({
      token,
      amountCents: deal.current_price * order.quantity,
      idempotencyKey: purchaseId,
      description: `deal ${deal.id} x${order.quantity}`,
    });
    // Timeliness only (it logs its own failure): an expired hold stops counting whether or not its job runs.
    const [settled] = await Promise.allSettled([charged, armHoldRelease(this.scheduler, deal.id, purchaseId, holdExpiresAt)]);
    if (settled.status === 'rejected') {
      // No answer (a dropped connection, a timeout): the card may have been charged. The purchase
      // stays reserved, its units held, and is settled from the processor's record when the
      // charge lock ends, as start-up recovery would: sold with its coupons if charged, else released.
      keepLock();
      const settleAt = new Date(context.now.getTime() + CHARGE_LOCK_MS);
      const armed = await armPurchaseRecovery(this.scheduler, purchaseId, settleAt);
      logger.error(
        `purchase ${purchaseId}: the processor did not answer its charge (${(settled.reason as Error)?.message}); ${armed ? `settled at ${settleAt.toISOString()}` : 'settled at the next start'}`,
      );
      throw new PaymentOutcomeUnknown(
        `the payment processor did not answer; the purchase is settled from its record within ${CHARGE_LOCK_MS / 60_000} minutes: fulfilled if the card was charged, released if not`,
        purchaseId,
      );
    }
    const outcome = settled.value;
    // Awaited by the caller's `finally`; caught here too so a failure is not an unhandled rejection meanwhile.
    chargeOver().catch(() => undefined);
    if (outcome.status !== 'approved') {
      await Promise.all([
        this.releaseHold(deal.id, purchaseId, context),
        handleCommand(
          this.store,
          purchaseStream(purchaseId),
          purchaseDecider,
          { type: 'RecordNonPayment', data: { purchaseId, partnerId: caller.partnerId, outcome: outcome.status, reason: outcome.reason } },
          context,
        ),
        disarmHoldRelease(this.scheduler, purchaseId),
      ]);
      if (outcome.status === 'declined') throw new Declined(`the card was declined: ${outcome.reason}`);
      throw new PaymentFailed('the payment processor failed; nothing was charged');
    }
    const record = (holdId: string): RecordPayment => ({
      type: 'RecordPayment',
      data: {
        purchaseId,
        partnerId: caller.partnerId,
        userId: order.userId,
        creditCardId: order.creditCardId,
        chargeId: outcome.chargeId,
        sessionId: order.sessionId,
        holdId,
      },
    });
    try {
      try {
        return await this.coupons.completePaid(
          { purchaseId, deal: snapshot, quantity: order.quantity, holdId: purchaseId, userId: order.userId, codes },
          caller,
          record,
          forBuyer,
        );
      } catch (error) {
        if (error instanceof DomainError) throw error;
        // The card is charged: a failed write (a busy or full disk) must not leave it without its
        // units and coupons. The general tail is idempotent and reads what was written; it is
        // tried again, and if it still fails, recovery finishes the purchase at the next start.
        return await retry(COMPLETION_ATTEMPTS, () => this.coupons.complete(purchaseId, caller, record, forBuyer));
      }
    } catch (error) {
      if (!(error instanceof CannotFulfil)) throw error;
      // The hold lapsed during the charge and the deal sold out meanwhile: no charge without units.
      await refundUnfulfilledCharge(
        this.store,
        this.gateway,
        { purchaseId, partnerId: caller.partnerId, chargeId: outcome.chargeId, amountCents: deal.current_price * order.quantity },
        context,
      );
      throw error;
    }
  }
}
