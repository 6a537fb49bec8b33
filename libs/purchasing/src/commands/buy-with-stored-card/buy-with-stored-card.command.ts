import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import {
  Clock,
  CommandCaller,
  IdempotencyKeyInUse,
  IdempotentRun,
  IdGenerator,
  LogPosition,
  NotFound,
  ValidationFailed,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { KeyedPurchaseStartedBefore } from '../../domain/purchase/keyed-purchases';
import { dealSnapshot } from '../../domain/purchase/purchase.events';
import type { ShippingAddress } from '../../domain/purchase/shipping-address';
import { DecidedPurchase, DecidedPurchases } from '../purchase-steps/decided-purchases';
import { KeyedPurchases } from '../purchase-steps/keyed-purchases';
import { PurchaseSteps } from '../purchase-steps/purchase-steps';
import { refuseFreeCardPurchase, refuseUnchargeableAmount, refuseUnsellable, SOLD_TYPES } from '../purchase-steps/sale-rules';

type Caller = CommandCaller & { partnerId: string };

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
 * POST /purchases: buy with a stored card. The full purchase names no
 * price: its order's `expectedPrice` is null, and the deal's price when the units are held is charged.
 */
export class BuyWithStoredCard extends Command<{ purchaseId: string; position: LogPosition | null; decided?: DecidedPurchase | null }> {
  constructor(
    readonly order: StoredCardOrder,
    readonly caller: Caller,
    /** The request's run under its `Idempotency-Key`, which names the purchase; null without one. */
    readonly keyed: IdempotentRun | null = null,
    /**
     * The answer is built from the purchase's own decision (`decided`, see `DecidedPurchases`), the
     * views it does not write left to the caller's next reads; else it waits for the views.
     */
    readonly fromDecision = false,
  ) {
    super();
  }
}

/**
 * Checks the user, the card, the deal and its price, then runs the purchase workflow (see
 * `purchase.workflow.ts`): lock, record and hold; charge; sell and issue the coupons, or give back.
 */
@CommandHandler(BuyWithStoredCard)
export class BuyWithStoredCardHandler implements ICommandHandler<BuyWithStoredCard> {
  constructor(
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly steps: PurchaseSteps,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly keyed: KeyedPurchases,
    private readonly decided: DecidedPurchases,
  ) {}

  async execute({ order, caller, keyed: run, fromDecision }: BuyWithStoredCard) {
    // A keyed request run again answers the purchase its first run made (before any check: the
    // deal or its price may have changed since).
    const keyed = run === null ? null : await this.keyed.card(run, () => this.ids.short());
    if (keyed?.resumed) return { purchaseId: keyed.purchaseId, position: keyed.position };
    const now = this.clock.now();
    const { deal, cardToken } = await this.checked(order, caller, now);
    const purchaseId = keyed?.purchaseId ?? this.ids.short();
    // An address given in this purchase gets a new id.
    const shipping = order.shipping && !('id' in order.shipping) ? { id: this.ids.short(), ...order.shipping } : order.shipping;
    if (fromDecision) this.decided.keep(caller, purchaseId);
    const answer = await this.steps.run(
      {
        type: 'StoredCardPurchaseStarted',
        data: {
          purchaseId,
          partnerId: caller.partnerId,
          userId: order.userId,
          creditCardId: order.creditCardId,
          cardToken,
          sessionId: order.sessionId,
          deal: dealSnapshot(deal),
          quantity: order.quantity,
          maxPerUser: deal.max_per_user,
          shipping,
          keyed: run !== null && keyed?.attempt != null ? { keyId: run.keyId, attempt: keyed.attempt } : null,
        },
      },
      caller,
      now,
    );
    if (answer.outcome === 'sold')
      return { purchaseId, position: answer.position, decided: fromDecision ? await this.decided.shown(caller, purchaseId) : null };
    if (answer.outcome === 'settled') throw new Error(`purchase ${purchaseId}: a purchase's start was answered as a settling`);
    // The key started a purchase before (its claim was lost with the store): that one is answered.
    if (run !== null && answer.error instanceof KeyedPurchaseStartedBefore) {
      const earlier = await this.keyed.resume(run, answer.error.purchaseIds);
      if (earlier.resumed) return { purchaseId: earlier.purchaseId, position: earlier.position };
      throw new IdempotencyKeyInUse('an earlier purchase of this Idempotency-Key stopped before its charge; send the request again', 1000);
    }
    throw this.keyed.refusal(run, answer.error);
  }

  /** The deal and the card's token, once the user, the card, the deal and the price are as the order says. */
  private async checked(order: StoredCardOrder, caller: Caller, now: Date) {
    // Looked up together (a view store on a server reads them in one statement), checked in order.
    const [user, card, view] = await Promise.all([
      this.accounts.user(caller.partnerId, order.userId),
      this.accounts.card(caller.partnerId, order.creditCardId),
      this.catalog.deal(order.dealId),
    ]);
    if (!user) throw new NotFound(`user ${order.userId} not found`);
    if (!card)
      throw new ValidationFailed([
        { type: 'not_found', resource: 'credit_card', field: 'credit_card_id', message: 'names no stored card' },
      ]);
    if (card.userId !== order.userId)
      throw new ValidationFailed([
        { type: 'not_owner', resource: 'credit_card', field: 'credit_card_id', message: 'is not a card of this user' },
      ]);
    if (!view) throw new NotFound(`deal ${order.dealId} not found`);
    const deal = view.deal!;
    refuseUnsellable(view, now.getTime(), SOLD_TYPES);
    refuseFreeCardPurchase(view);
    refuseUnchargeableAmount(view, order.quantity);
    // Shipped goods need an address to buy (the full purchase requires its section too).
    if (deal.fulfillment_method === 'shipped' && !order.shipping)
      throw new ValidationFailed([
        { type: 'missing_field', resource: 'shipping_address', field: 'shipping_address', message: 'is required for a shipped deal' },
      ]);
    if (order.expectedPrice !== null && order.expectedPrice !== deal.current_price)
      throw new ValidationFailed([
        {
          type: 'invalid',
          resource: 'purchase',
          field: 'expected_price_per_unit',
          message: `is ${order.expectedPrice}, but the price is now ${deal.current_price}`,
        },
      ]);
    return { deal, cardToken: card.token };
  }
}
