import {
  AccountQueries,
  AccountsSettings,
  cardExpiryIssue,
  cardIssue,
  enteredCard,
  PurchaseUser,
  STORED_CARDS,
  StoreCard,
  USER_ACCOUNTS,
  UserWrites,
} from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import {
  CardDetails,
  Clock,
  DomainError,
  EventStore,
  IdempotentRun,
  IdGenerator,
  isSandbox,
  laterPosition,
  NotFound,
  PartnerCaller,
  ValidationFailed,
  ValidationIssue,
  ViewProgress,
} from '@deals/kernel';
import { Command, CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ShippingAddress } from '../../domain/purchase/shipping-address';
import { dealSnapshot } from '../../domain/purchase/purchase.events';
import { PurchaseQueries } from '../../queries/purchase.queries';
import {
  BuyWithStoredCard,
  EnteredCard,
  giftRecipient,
  GiftOrder,
  liveUserOf,
  registerOrTake,
  StoredCardOrder,
  StoredCardOutcome,
  UsersByEmail,
} from '../buy-with-stored-card/buy-with-stored-card.command';
import { KeyedPurchases } from '../purchase-steps/keyed-purchases';
import {
  refuseFreeCardPurchase,
  refuseOverLimit,
  refuseOverUserLimit,
  refuseShortStock,
  refuseUnchargeableAmount,
  refuseUnsellable,
  SOLD_TYPES,
} from '../purchase-steps/sale-rules';

/** The full purchase's order, its fields checked: each section is a record the caller has, or one to make. */
export interface FullPurchaseOrder {
  dealId: string;
  quantity: number;
  buyer: { userId: string } | { user: PurchaseUser };
  card: { creditCardId: string } | { card: CardDetails };
  /** Used only for a shipped deal. */
  shipping: { addressId: string } | { address: Omit<ShippingAddress, 'id'> } | null;
  sessionId: string | null;
  /** Bought for someone else (see `StoredCardOrder.gift`); null: for the buyer. */
  gift: GiftOrder | null;
  /** A dry run (`dry_run: true`): checked and decided as the purchase would be, nothing made, written or charged. */
  dryRun?: boolean;
}

/** POST /v1/purchases/full.json: user, card and purchase in one call. */
export class FullPurchase extends Command<StoredCardOutcome> {
  constructor(
    readonly order: FullPurchaseOrder,
    readonly caller: PartnerCaller,
    /** The request's run under its `Idempotency-Key`, which names the purchase; null without one. */
    readonly keyed: IdempotentRun | null = null,
  ) {
    super();
  }
}

/**
 * Checks what the request could not (the deal, a card's expiry, the shipping a shipped deal needs)
 * before anything is made, so that a failing section leaves nothing behind;
 * then finds or creates the user (same email: reused), stores the card (same card: reused), and
 * buys with it. An error after the user or card exists names them (`user_id`, `credit_card_id`).
 */
@CommandHandler(FullPurchase)
export class FullPurchaseHandler implements ICommandHandler<FullPurchase> {
  private readonly byEmail: UsersByEmail;

  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserWrites,
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly purchases: PurchaseQueries,
    private readonly progress: ViewProgress,
    private readonly clock: Clock,
    private readonly store: EventStore,
    private readonly keyed: KeyedPurchases,
    private readonly ids: IdGenerator,
    private readonly settings: AccountsSettings,
  ) {
    this.byEmail = { users, accounts, progress, store };
  }

  async execute({ order, caller, keyed: run }: FullPurchase): Promise<StoredCardOutcome> {
    // A keyed request run again answers the purchase its first run made, making nothing more.
    if (run?.resumed) {
      const keyed = await this.keyed.card(run, () => '');
      if (keyed.resumed) return { purchaseId: keyed.purchaseId, position: keyed.position };
    }
    const now = this.clock.now();
    const view = await this.catalog.deal(order.dealId);
    if (!view) throw new NotFound('deal not found');
    const issues: ValidationIssue[] = [];
    const expired = 'card' in order.card ? cardExpiryIssue(order.card.card, now) : null;
    if (expired) issues.push(expired);
    let shipping: ShippingAddress | null = null;
    if (view.deal?.fulfillment_method === 'shipped') {
      const given = order.shipping;
      if (given && 'addressId' in given) {
        shipping = await this.purchases.shippingAddress(caller.partnerId, given.addressId);
        if (!shipping)
          issues.push({ type: 'not_found', resource: 'shipping_address', field: 'shipping_address_id', message: 'names no known address' });
      } else if (given) shipping = { id: this.ids.short(), ...given.address };
      else
        issues.push({
          type: 'missing_field',
          resource: 'shipping_address',
          field: 'shipping_address',
          message: 'is required for a shipped deal',
        });
    }
    if (issues.length) throw new ValidationFailed(issues);
    // The deal's own refusals (not on sale, free, over the limit, sold out, a known user's earlier
    // units) come before any user or card is made for a purchase that cannot happen. Only units sold
    // between these checks and the hold leave the user and card made: the refusal then names them.
    // The live user the email names, reused by the purchase; looked up once.
    const { buyer, quantity } = order;
    const reusable = 'userId' in buyer ? null : await liveUserOf(this.byEmail, caller.partnerId, buyer.user.profile.email);
    refuseUnsellable(view, now.getTime(), SOLD_TYPES);
    refuseFreeCardPurchase(view);
    refuseOverLimit(view, quantity);
    refuseUnchargeableAmount(view, quantity);
    // The view counts the live deal's units; a sandbox's own inventory of the deal decides its purchase.
    if (!isSandbox(caller.partnerId)) refuseShortStock(view, quantity, now.getTime());
    const known = 'userId' in buyer ? buyer.userId : reusable;
    if (known) refuseOverUserLimit(view, quantity, await this.purchases.unitsBought(caller.partnerId, known, view.deal!.id));
    // A gift the purchase would refuse (its time, its address) is refused before any user or card is made.
    if (order.gift)
      await giftRecipient(
        this.byEmail,
        order.gift,
        'user' in buyer && !known ? { email: buyer.user.profile.email } : { userId: known! },
        caller,
        dealSnapshot(view.deal!),
        now,
        false,
      );

    const extra: Record<string, unknown> = {};
    try {
      if (order.dryRun)
        return await this.commands.execute(new BuyWithStoredCard(await this.dryRun(order, reusable, shipping, caller, extra), caller));
      const userId = await this.resolveUser(buyer, reusable, caller);
      extra.user_id = userId;
      const creditCardId = await this.resolveCard(order.card, userId, caller);
      extra.credit_card_id = creditCardId;
      return await this.commands.execute(
        new BuyWithStoredCard(
          {
            dealId: order.dealId,
            quantity,
            userId,
            creditCardId,
            expectedPrice: null,
            sessionId: order.sessionId,
            shipping,
            gift: order.gift,
          },
          caller,
          run,
        ),
      );
    } catch (error) {
      if (error instanceof DomainError) Object.assign(error.extra, extra);
      throw error;
    }
  }

  /**
   * The stored-card order a dry run decides: the user and card sections checked as `resolveUser`
   * and `resolveCard` (and the card's storing) check them, in their order, naming in `extra` what
   * the purchase would name; a user or card they would make is not made, but given as made (the
   * user under an id drawn for the run, which no answer shows).
   */
  private async dryRun(
    order: FullPurchaseOrder,
    reusable: string | null,
    shipping: ShippingAddress | null,
    caller: PartnerCaller,
    extra: Record<string, unknown>,
  ): Promise<StoredCardOrder> {
    const { buyer, card: given } = order;
    let userId: string;
    if ('userId' in buyer) {
      if (!(await this.accounts.user(caller.partnerId, buyer.userId)))
        throw new ValidationFailed([{ type: 'not_found', resource: 'user', field: 'user_id', message: 'names no user' }]);
      userId = buyer.userId;
    } else {
      // A user it would make: refused here as its registration would be (an address a deleted user holds, say).
      if (!reusable) await this.users.checkRegistration({ profile: buyer.user.profile, sessionId: null }, true, caller);
      userId = reusable ?? this.ids.short();
    }
    const madeUser = !('userId' in buyer) && !reusable;
    if (!madeUser) extra.user_id = userId;
    let madeCard: EnteredCard | null = null;
    let creditCardId = '';
    if ('creditCardId' in given) {
      await this.storedCardOf(caller, given.creditCardId, userId);
      creditCardId = extra.credit_card_id = given.creditCardId;
    } else {
      const issue = cardIssue(given.card, this.clock.now(), caller.partnerId, this.settings);
      if (issue) throw new ValidationFailed([issue]);
      madeCard = enteredCard(given.card);
    }
    const { dealId, quantity, sessionId, gift } = order;
    const dryRun = { made: { user: madeUser, card: madeCard } };
    return { dealId, quantity, userId, creditCardId, expectedPrice: null, sessionId, shipping, dryRun, gift };
  }

  /** `reusable`: the live user the user object's email names, if any (`liveUserOf`). */
  private async resolveUser(buyer: FullPurchaseOrder['buyer'], reusable: string | null, caller: PartnerCaller): Promise<string> {
    if ('userId' in buyer) {
      if (!(await this.accounts.user(caller.partnerId, buyer.userId)))
        throw new ValidationFailed([{ type: 'not_found', resource: 'user', field: 'user_id', message: 'names no user' }]);
      return buyer.userId;
    }
    if (reusable) return reusable;
    const { profile, password } = buyer.user;
    // Another call registering the same email at this moment (two full purchases at once): that
    // user is reused once it exists, as any matching user is.
    const created = await registerOrTake(this.byEmail, profile, caller);
    if (!created.made) return created.userId;
    const withPassword =
      password !== undefined ? await this.users.update(created.userId, { profile: {}, password }, true, caller) : created;
    await this.progress.waitFor([USER_ACCOUNTS], laterPosition(withPassword.position, created.position));
    return created.userId;
  }

  /** Refuses a stored card that is not one of the user's, as the purchase with a stored card does. */
  private async storedCardOf(caller: PartnerCaller, creditCardId: string, userId: string): Promise<void> {
    const stored = await this.accounts.card(caller.partnerId, creditCardId);
    if (!stored)
      throw new ValidationFailed([
        { type: 'not_found', resource: 'credit_card', field: 'credit_card_id', message: 'names no stored card' },
      ]);
    if (stored.userId !== userId)
      throw new ValidationFailed([
        { type: 'not_owner', resource: 'credit_card', field: 'credit_card_id', message: 'is not a card of this user' },
      ]);
  }

  private async resolveCard(given: FullPurchaseOrder['card'], userId: string, caller: PartnerCaller): Promise<string> {
    if ('creditCardId' in given) {
      await this.storedCardOf(caller, given.creditCardId, userId);
      return given.creditCardId;
    }
    const stored = await this.commands.execute(new StoreCard(userId, given.card, caller));
    await this.progress.waitFor([STORED_CARDS, USER_ACCOUNTS], stored.position);
    return stored.cardId;
  }
}
