import { AccountQueries, cardExpiryIssue, NewProfile, USER_ACCOUNTS, UserWrites } from '@deals/accounts';
import { CatalogQueries, DealTerms } from '@deals/catalog';
import {
  Clock,
  CommandCaller,
  EventStore,
  foldedIdentity,
  IdempotencyKeyInUse,
  IdempotentRun,
  IdGenerator,
  LogPosition,
  NotFound,
  PartnerCaller,
  Scheduler,
  ValidationFailed,
  ViewProgress,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { buyerStanding, unitsLeft } from '../../domain/inventory/inventory.decider';
import { buyerKey } from '../../domain/inventory/inventory.events';
import { KeyedPurchaseStartedBefore } from '../../domain/purchase/keyed-purchases';
import type { StoredCardPurchaseStarted } from '../../domain/purchase-workflow/purchase.workflow';
import { DealSnapshot, dealSnapshot, PurchaseGift } from '../../domain/purchase/purchase.events';
import type { ShippingAddress } from '../../domain/purchase/shipping-address';
import { DecidedPurchase, DecidedPurchases } from '../purchase-steps/decided-purchases';
import { couponExpiry } from '../purchase-steps/coupon-issuer';
import { armGiftMail } from '../purchase-steps/gift-mail-job';
import { KeyedPurchases } from '../purchase-steps/keyed-purchases';
import { PurchaseSteps } from '../purchase-steps/purchase-steps';
import { refuseFreeCardPurchase, refuseUnchargeableAmount, refuseUnsellable, SOLD_TYPES } from '../purchase-steps/sale-rules';

type Caller = CommandCaller & { partnerId: string };

/** How far ahead a gift may be mailed. */
export const GIFT_DELIVERY_MAX_DAYS = 90;

/** A gift as the request gives it: whom it is for (the user its email names, or one made with it), and its mail. */
export interface GiftOrder {
  email: string;
  name: string;
  message: string | null;
  /** When the recipient is mailed it; null: once bought. */
  deliverAt: Date | null;
}

/** What finds or makes a partner's user by email (the full purchase's buyer, a gift's recipient). */
export interface UsersByEmail {
  users: UserWrites;
  accounts: AccountQueries;
  progress: ViewProgress;
  store: EventStore;
}

/** The live user of this partner an email names (compared as users' emails are: NFC, case-folded); null if none. */
export async function liveUserOf({ users, accounts }: UsersByEmail, partnerId: string, email: string): Promise<string | null> {
  const owner = await users.owner(partnerId, email);
  return owner && (await accounts.user(partnerId, owner)) ? owner : null;
}

/**
 * A user registered with `profile` (`UserWrites.register`, what `RegisterUser` runs; `made`); when
 * another call registers the same address at this moment, that user once it exists and is live.
 * Refused as the registration is (an address a deleted user holds).
 */
export async function registerOrTake(
  by: UsersByEmail,
  profile: NewProfile,
  caller: PartnerCaller,
): Promise<{ userId: string; position: LogPosition | null; made: boolean }> {
  try {
    return { ...(await by.users.register({ profile, sessionId: null }, true, caller)), made: true };
  } catch (error) {
    if (!(error instanceof ValidationFailed) || !error.issues.some((i) => i.field === 'email')) throw error;
    const other = await by.users.ownerOnceRegistered(caller.partnerId, profile.email);
    // Not one to take: none appeared, or its user is deleted.
    if (!other) throw error;
    await by.progress.waitFor([USER_ACCOUNTS], await by.store.head());
    if (!(await by.accounts.user(caller.partnerId, other))) throw error;
    return { userId: other, position: null, made: false };
  }
}

/** A refusal of the gift's `field` (`gift.<field>`). */
const giftRefused = (field: string, message: string) =>
  new ValidationFailed([{ type: 'invalid', resource: 'gift', field: `gift.${field}`, message }]);

/**
 * A gift as the purchase records it, checked before anything is made for it: its delivery time in
 * the future and at most {@link GIFT_DELIVERY_MAX_DAYS} days on (the clock's: a test clock's under
 * one), and before the coupons of `deal` bought now expire (mailed later, they would be worth
 * nothing), its address not the buyer's (`buyer`: the buyer's id, or the address of a buyer still to be
 * made). Its recipient is the live user of the partner the address names; else a user registered
 * with it (`make`), or, not making one, none (null) once its registration is checked (an address a
 * deleted user holds is refused). A refusal names the gift's field.
 */
export async function giftRecipient(
  by: UsersByEmail,
  gift: GiftOrder,
  buyer: { userId: string } | { email: string },
  caller: PartnerCaller,
  deal: Pick<DealSnapshot, 'expiresAt' | 'expirationDays'>,
  now: Date,
  make: boolean,
): Promise<PurchaseGift | null> {
  const at = gift.deliverAt?.getTime();
  if (at !== undefined && (at <= now.getTime() || at > now.getTime() + GIFT_DELIVERY_MAX_DAYS * 86_400_000))
    throw giftRefused('deliver_at', `must be in the future, at most ${GIFT_DELIVERY_MAX_DAYS} days ahead`);
  const expiry = couponExpiry(deal, now);
  if (at !== undefined && expiry !== null && at >= Date.parse(expiry)) throw giftRefused('deliver_at', 'must be before its coupons expire');
  const known = await liveUserOf(by, caller.partnerId, gift.email);
  const own = 'userId' in buyer ? known === buyer.userId : foldedIdentity(buyer.email.trim()) === foldedIdentity(gift.email.trim());
  if (own) throw giftRefused('email', "is the buyer's own address: a gift is for another user");
  const { name, message } = gift;
  const deliverAt = gift.deliverAt?.toISOString() ?? null;
  if (known) return { userId: known, name, message, deliverAt };
  try {
    if (!make) {
      await by.users.checkRegistration({ profile: { email: gift.email }, sessionId: null }, true, caller);
      return null;
    }
    const made = await registerOrTake(by, { email: gift.email }, caller);
    await by.progress.waitFor([USER_ACCOUNTS], made.position);
    return { userId: made.userId, name, message, deliverAt };
  } catch (error) {
    // The registration's refusal (an address a deleted user holds), told of the gift's field.
    if (!(error instanceof ValidationFailed)) throw error;
    throw new ValidationFailed(error.issues.map((issue) => ({ ...issue, resource: 'gift', field: `gift.${issue.field ?? 'email'}` })));
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
  /** A dry run (`dry_run: true`, see {@link DryRun}); null or absent: the purchase. */
  dryRun?: DryRun | null;
  /** Bought for someone else, who holds the coupons and is mailed them; null or absent: for the user. */
  gift?: GiftOrder | null;
}

/** A card the full purchase would store first, as entered (see `enteredCard`). */
export interface EnteredCard {
  brand: string;
  last4: string;
  month: number;
  year: number;
}

/**
 * A dry run: the order checked and its start decided as the purchase's would be, nothing written,
 * held or charged. `made`: what the full purchase would make before buying, so not there to read
 * (a new user, under an id drawn for the run; a card to store, as entered).
 */
export interface DryRun {
  made: { user: boolean; card: EnteredCard | null };
}

/** The stored-card call's dry run: the user and card are read as the purchase reads them. */
export const DRY_RUN: DryRun = { made: { user: false, card: null } };

/** What a dry run foresees of the purchase it was asked about: what it would take, and from whom. */
export interface PurchasePreview {
  deal: DealSnapshot;
  window: { startAt: string; endAt: string; expiresAt: string | null };
  quantity: number;
  amountCents: number;
  /** Null: the full purchase would make the user. */
  userId: string | null;
  card: EnteredCard & { creditCardId: string | null };
  /** The deal's `max_per_user` (null: none), and what it counts of the user before this purchase. */
  limit: { maxPerUser: number | null; bought: number; holding: number };
  /** Units left before this purchase (the inventory the purchase would hold from: a sandbox's own). */
  unitsLeft: number;
}

/** What the stored-card purchase answers: the purchase made, or, for a dry run, what it would be. */
export type StoredCardOutcome =
  | { purchaseId: string; position: LogPosition | null; decided?: DecidedPurchase | null; preview?: undefined }
  | { preview: PurchasePreview };

/**
 * POST /purchases: buy with a stored card. The full purchase names no
 * price: its order's `expectedPrice` is null, and the deal's price when the units are held is charged.
 */
export class BuyWithStoredCard extends Command<StoredCardOutcome> {
  constructor(
    readonly order: StoredCardOrder,
    readonly caller: Caller,
    /** The request's run under its `Idempotency-Key`, which names the purchase; null without one. */
    readonly keyed: IdempotentRun | null = null,
  ) {
    super();
  }
}

/**
 * Checks the user, the card, the deal and its price (and a gift's recipient: found by email, or
 * made), then runs the purchase workflow (see `purchase.workflow.ts`): lock, record and hold;
 * charge; sell and issue the coupons, or give back. A gift sold has its mail armed.
 */
@CommandHandler(BuyWithStoredCard)
export class BuyWithStoredCardHandler implements ICommandHandler<BuyWithStoredCard> {
  private readonly byEmail: UsersByEmail;

  constructor(
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly steps: PurchaseSteps,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly keyed: KeyedPurchases,
    private readonly decided: DecidedPurchases,
    private readonly scheduler: Scheduler,
    users: UserWrites,
    progress: ViewProgress,
    store: EventStore,
  ) {
    this.byEmail = { users, accounts, progress, store };
  }

  async execute({ order, caller, keyed: run }: BuyWithStoredCard): Promise<StoredCardOutcome> {
    if (order.dryRun) return { preview: await this.preview(order, order.dryRun, caller) };
    // A keyed request run again answers the purchase its first run made (before any check: the
    // deal or its price may have changed since).
    const keyed = run === null ? null : await this.keyed.card(run, () => this.ids.short());
    if (keyed?.resumed) return { purchaseId: keyed.purchaseId, position: keyed.position };
    const now = this.clock.now();
    const { deal, card } = await this.checked(order, caller, now, DRY_RUN.made);
    const gift = order.gift
      ? await giftRecipient(this.byEmail, order.gift, { userId: order.userId }, caller, dealSnapshot(deal), now, true)
      : null;
    const purchaseId = keyed?.purchaseId ?? this.ids.short();
    const answer = await this.steps.run(
      this.started(
        order,
        caller,
        purchaseId,
        deal,
        card.token,
        run !== null && keyed?.attempt != null ? { keyId: run.keyId, attempt: keyed.attempt } : null,
        gift,
      ),
      caller,
      now,
    );
    if (answer.outcome === 'sold') {
      if (gift) await armGiftMail(this.scheduler, purchaseId, caller.partnerId, gift, now);
      // Answered from what its units decided (see `DecidedPurchases`), else once the views show it.
      return { purchaseId, position: answer.position, decided: await this.decided.shown(caller, purchaseId) };
    }
    if (answer.outcome === 'settled') throw new Error(`purchase ${purchaseId}: a purchase's start was answered as a settling`);
    // The key started a purchase before (its claim was lost with the store): that one is answered.
    if (run !== null && answer.error instanceof KeyedPurchaseStartedBefore) {
      const earlier = await this.keyed.resume(run, answer.error.purchaseIds);
      if (earlier.resumed) return { purchaseId: earlier.purchaseId, position: earlier.position };
      throw new IdempotencyKeyInUse('an earlier purchase of this Idempotency-Key stopped before its charge; send the request again', 1000);
    }
    throw this.keyed.refusal(run, answer.error);
  }

  /**
   * A dry run: the same checks, then the same workflow's start decided on the streams as they are
   * (`PurchaseSteps.preview`), up to the charge it would ask for. Its refusal is thrown as the
   * purchase's would be; no key, lock, hold, charge or job is taken.
   */
  private async preview(order: StoredCardOrder, dry: DryRun, caller: Caller): Promise<PurchasePreview> {
    const now = this.clock.now();
    const { deal, card } = await this.checked(order, caller, now, dry.made);
    // A gift's recipient is checked as the purchase would find or make it, and not made; its start is the purchase's.
    if (order.gift) await giftRecipient(this.byEmail, order.gift, { userId: order.userId }, caller, dealSnapshot(deal), now, false);
    const purchaseId = this.ids.short();
    const answer = await this.steps.preview(this.started(order, caller, purchaseId, deal, card.token, null, null), caller, now);
    if (answer.outcome === 'refused') throw this.keyed.refusal(null, answer.error);
    const { bought, holding } = buyerStanding(answer.inventory, buyerKey(caller.partnerId, order.userId), now.getTime(), purchaseId);
    return {
      deal: dealSnapshot(deal),
      window: { startAt: deal.start_at, endAt: deal.end_at, expiresAt: deal.expires_at ?? null },
      quantity: order.quantity,
      amountCents: answer.amountCents,
      userId: dry.made.user ? null : order.userId,
      card: {
        creditCardId: dry.made.card ? null : order.creditCardId,
        brand: card.brand,
        last4: card.last4,
        month: card.month,
        year: card.year,
      },
      limit: { maxPerUser: deal.max_per_user ?? null, bought, holding },
      // The hold decided is this purchase's: the units left before it.
      unitsLeft: unitsLeft(answer.inventory, now.getTime()) + order.quantity,
    };
  }

  /** How the purchase workflow starts for `order`. */
  private started(
    order: StoredCardOrder,
    caller: Caller,
    purchaseId: string,
    deal: DealTerms,
    cardToken: string,
    keyed: { keyId: string; attempt: number } | null,
    gift: PurchaseGift | null,
  ): StoredCardPurchaseStarted {
    // An address given in this purchase gets a new id.
    const shipping = order.shipping && !('id' in order.shipping) ? { id: this.ids.short(), ...order.shipping } : order.shipping;
    return {
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
        gift,
        keyed,
      },
    };
  }

  /**
   * The deal and the card, once the user, the card, the deal and the price are as the order says.
   * `made`: what a dry run of the full purchase would have made first, taken as given instead of read.
   */
  private async checked(order: StoredCardOrder, caller: Caller, now: Date, made: DryRun['made']) {
    // Looked up together (a view store on a server reads them in one statement), checked in order.
    const [user, stored, view] = await Promise.all([
      made.user ? null : this.accounts.user(caller.partnerId, order.userId),
      made.card ? null : this.accounts.card(caller.partnerId, order.creditCardId),
      this.catalog.deal(order.dealId),
    ]);
    if (!made.user && !user) throw new NotFound('user not found');
    const card = made.card
      ? { ...made.card, userId: order.userId, token: '' }
      : stored && {
          brand: stored.brand,
          last4: stored.last4,
          month: stored.expMonth,
          year: stored.expYear,
          userId: stored.userId,
          token: stored.token,
        };
    if (!card)
      throw new ValidationFailed([
        { type: 'not_found', resource: 'credit_card', field: 'credit_card_id', message: 'names no stored card' },
      ]);
    if (card.userId !== order.userId)
      throw new ValidationFailed([
        { type: 'not_owner', resource: 'credit_card', field: 'credit_card_id', message: 'is not a card of this user' },
      ]);
    // A card past its expiry month is declined by any processor: refused here, before a lock or a hold.
    if (cardExpiryIssue(card, now))
      throw new ValidationFailed([{ type: 'invalid', resource: 'credit_card', field: 'credit_card_id', message: 'has expired' }]);
    if (!view) throw new NotFound('deal not found');
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
          // eslint-disable-next-line no-restricted-syntax -- the deal's price, ours
          message: `differs from the deal's current price, ${deal.current_price}`,
        },
      ]);
    return { deal, card };
  }
}
