import {
  AccountQueries,
  passwordInput,
  passwordIssues,
  readProfile,
  STORED_CARDS,
  StoreCard,
  USER_ACCOUNTS,
  UserWrites,
  validateCardInput,
} from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import {
  Clock,
  CommandCaller,
  DomainError,
  EventStore,
  LogPosition,
  NotFound,
  requiredTextIssue,
  ValidationFailed,
  ValidationIssue,
  ViewProgress,
} from '@deals/kernel';
import { Command, CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { unitCountIssue } from '../domain/inventory/inventory.decider';
import { readShippingAddress, ShippingAddress } from '../domain/purchase/shipping-address';
import { PurchaseQueries } from '../queries/purchase.queries';
import { BuyWithStoredCard } from './buy-with-stored-card.command';
import {
  refuseFreeCardPurchase,
  refuseOverLimit,
  refuseOverUserLimit,
  refuseShortStock,
  refuseUnchargeableAmount,
  refuseUnsellable,
  SOLD_TYPES,
} from './sale-rules';

type Caller = CommandCaller & { partnerId: string };
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** POST /v1/purchases/full.json: user, card and purchase in one call (part 4.6.1). */
export class FullPurchase extends Command<{ purchaseId: string; position: LogPosition | null }> {
  constructor(
    readonly input: Record<string, unknown>,
    readonly caller: Caller,
  ) {
    super();
  }
}

/**
 * Checks every section first (user, card, shipping) so that a failing one leaves nothing behind;
 * then finds or creates the user (same email: reused), stores the card (same card: reused), and
 * buys with it. An error after the user or card exists names them (`user_id`, `credit_card_id`).
 */
@CommandHandler(FullPurchase)
export class FullPurchaseHandler implements ICommandHandler<FullPurchase> {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserWrites,
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly purchases: PurchaseQueries,
    private readonly progress: ViewProgress,
    private readonly clock: Clock,
    private readonly store: EventStore,
  ) {}

  async execute({ input, caller }: FullPurchase) {
    const now = this.clock.now();
    const issues: ValidationIssue[] = [];
    const issue = (resource: string, field: string, message: string, type: ValidationIssue['type'] = 'invalid') =>
      issues.push({ type, resource, field, message });
    const badDeal = requiredTextIssue(input.deal_id, 'purchase', 'deal_id');
    if (badDeal) issues.push(badDeal);
    const badCount = unitCountIssue(input.quantity, 'quantity');
    if (badCount) issues.push(badCount);
    const user = isObject(input.user) ? input.user : null;
    if (typeof input.user_id !== 'string' && !user) {
      if (input.user_id !== undefined && input.user_id !== null) issue('user', 'user_id', 'must be a string');
      else
        issue(
          'user',
          'user',
          'give user_id or a user object',
          input.user === undefined || input.user === null ? 'missing_field' : 'invalid',
        );
    }
    const password = user ? passwordInput(user) : null;
    const pass = password?.pass;
    if (user) {
      const { issues: profileIssues } = readProfile({ email: user.email, first_name: user.first_name, last_name: user.last_name }, now);
      issues.push(...profileIssues);
      if (user.email === undefined) issue('user', 'email', 'is required', 'missing_field');
      issues.push(...password!.conflicts);
      if (pass !== undefined && !password!.conflicts.length) issues.push(...passwordIssues(pass, password!.confirmation, password!.names));
    }
    const card = isObject(input.credit_card) ? input.credit_card : null;
    if (typeof input.credit_card_id !== 'string' && !card) {
      if (input.credit_card_id !== undefined && input.credit_card_id !== null) issue('credit_card', 'credit_card_id', 'must be a string');
      else
        issue(
          'credit_card',
          'credit_card',
          'give credit_card_id or a credit_card object',
          input.credit_card === undefined || input.credit_card === null ? 'missing_field' : 'invalid',
        );
    }
    if (card) issues.push(...validateCardInput(card, now));
    const view = typeof input.deal_id === 'string' ? await this.catalog.deal(input.deal_id) : null;
    if (typeof input.deal_id === 'string' && !view) throw new NotFound(`deal ${input.deal_id} not found`);
    let shipping: ShippingAddress | null = null;
    if (view?.deal?.fulfillment_method === 'shipped') {
      if (typeof input.shipping_address_id === 'string')
        shipping = await this.purchases.shippingAddress(caller.partnerId, input.shipping_address_id);
      else if (input.shipping_address !== undefined) {
        const read = readShippingAddress(input.shipping_address, `${now.getTime().toString(36)}-${Math.random().toString(36).slice(2, 8)}`);
        issues.push(...read.issues);
        shipping = read.address;
      } else issue('shipping_address', 'shipping_address', 'is required for a shipped deal', 'missing_field');
      if (typeof input.shipping_address_id === 'string' && !shipping)
        issue('shipping_address', 'shipping_address_id', 'names no known address', 'not_found');
    }
    if (issues.length) throw new ValidationFailed(issues);
    // The deal's own refusals (not on sale, free, over the limit, sold out, a known user's earlier
    // units) come before any user or card is made for a purchase that cannot happen. Only units sold
    // between these checks and the hold leave the user and card made: the refusal then names them.
    // The live user the email names, reused by the purchase (part 4.6.1); looked up once.
    const reusable = typeof input.user_id === 'string' ? null : await this.reusableUser(caller.partnerId, String(user!.email));
    if (view) {
      refuseUnsellable(view, now.getTime(), SOLD_TYPES);
      refuseFreeCardPurchase(view);
      refuseOverLimit(view, input.quantity as number);
      refuseUnchargeableAmount(view, input.quantity as number);
      refuseShortStock(view, input.quantity as number, now.getTime());
      const known = typeof input.user_id === 'string' ? input.user_id : reusable;
      if (known)
        refuseOverUserLimit(view, input.quantity as number, await this.purchases.unitsBought(caller.partnerId, known, view.deal!.id));
    }

    const extra: Record<string, unknown> = {};
    try {
      const userId = await this.resolveUser(input.user_id, user, reusable, pass as string | undefined, caller);
      extra.user_id = userId;
      const creditCardId = await this.resolveCard(input.credit_card_id, card, userId, caller);
      extra.credit_card_id = creditCardId;
      return await this.commands.execute(
        new BuyWithStoredCard(
          {
            deal_id: input.deal_id,
            quantity: input.quantity,
            user_id: userId,
            credit_card_id: creditCardId,
            session_id: input.session_id,
            shipping_address: shipping ?? undefined,
          },
          caller,
          { atCurrentPrice: true },
        ),
      );
    } catch (error) {
      if (error instanceof DomainError) Object.assign(error.extra, extra);
      throw error;
    }
  }

  /** The live user of this partner an email names, whom a user object with it reuses; null if none. */
  private async reusableUser(partnerId: string, email: string): Promise<string | null> {
    const owner = await this.users.owner(partnerId, email);
    return owner && (await this.accounts.user(partnerId, owner)) ? owner : null;
  }

  /** `reusable`: the live user the user object's email names, if any ({@link reusableUser}). */
  private async resolveUser(
    userId: unknown,
    user: Record<string, unknown> | null,
    reusable: string | null,
    pass: string | undefined,
    caller: Caller,
  ): Promise<string> {
    if (typeof userId === 'string') {
      if (!(await this.accounts.user(caller.partnerId, userId)))
        throw new ValidationFailed([{ type: 'not_found', resource: 'user', field: 'user_id', message: 'names no user' }]);
      return userId;
    }
    if (reusable) return reusable;
    let created;
    try {
      created = await this.users.register({ email: user!.email, first_name: user!.first_name, last_name: user!.last_name }, true, caller);
    } catch (error) {
      // Another call is registering the same email at this moment (two full purchases at once):
      // that user is reused once it exists, as any matching user is (part 4.6.1).
      if (!(error instanceof ValidationFailed) || !error.issues.some((i) => i.field === 'email')) throw error;
      const other = await this.users.ownerOnceRegistered(caller.partnerId, String(user!.email));
      // Not one to reuse: none appeared, or its user is deleted.
      if (!other) throw error;
      await this.progress.waitFor([USER_ACCOUNTS], await this.store.head());
      if (!(await this.accounts.user(caller.partnerId, other))) throw error;
      return other;
    }
    const withPassword =
      pass !== undefined ? await this.users.update(created.userId, { pass, pass_confirmation: pass }, true, caller) : created;
    await this.progress.waitFor([USER_ACCOUNTS], withPassword.position ?? created.position);
    return created.userId;
  }

  private async resolveCard(cardId: unknown, card: Record<string, unknown> | null, userId: string, caller: Caller): Promise<string> {
    if (typeof cardId === 'string') {
      const stored = await this.accounts.card(caller.partnerId, cardId);
      if (!stored)
        throw new ValidationFailed([
          { type: 'not_found', resource: 'credit_card', field: 'credit_card_id', message: 'names no stored card' },
        ]);
      if (stored.userId !== userId)
        throw new ValidationFailed([
          { type: 'not_owner', resource: 'credit_card', field: 'credit_card_id', message: 'is not a card of this user' },
        ]);
      return cardId;
    }
    const stored = await this.commands.execute(new StoreCard(userId, card!, caller));
    await this.progress.waitFor([STORED_CARDS, USER_ACCOUNTS], stored.position);
    return stored.cardId;
  }
}
