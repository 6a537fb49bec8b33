import { CatalogQueries } from '@deals/catalog';
import {
  CannotFulfil,
  CannotFulfilReseller,
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  IdGenerator,
  loadAggregate,
  LogPosition,
  NotFound,
  requiredTextIssue,
  ValidationFailed,
  ValidationIssue,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { inventoryDecider } from '../../domain/inventory/inventory.decider';
import { holdExpiry, inventoryStream } from '../../domain/inventory/inventory.events';
import { purchaseDecider } from '../../domain/purchase/purchase.decider';
import { dealSnapshot, purchaseStream } from '../../domain/purchase/purchase.events';
import {
  ResaleClaimSuperseded,
  ResaleTerms,
  transactionReferenceDecider,
  transactionReferenceStream,
} from '../../domain/purchase/resale-claim';
import { PurchaseSteps } from '../purchase-steps/purchase-steps';
import { refuseOverLimit, refuseUnsellable, RESOLD_TYPES } from '../purchase-steps/sale-rules';

type Caller = CommandCaller & { partnerId: string };

/** Part 4.6.2's fields as the request schema reads them: each checked for its form, none yet required. */
export interface ResellerSaleFields {
  deal_id?: string;
  transaction_reference?: string;
  transaction_date?: string;
  transaction_amount?: number;
  quantity?: number;
  first_name?: string;
  last_name?: string;
  address_type?: string;
  address1?: string;
  address2?: string;
  postal_code?: string;
  city?: string;
  state?: string;
  country?: string;
  telephone?: string;
}

/** POST /api/v3/resellers/purchases (part 4.6.2). */
export class RecordResellerPurchase extends Command<{ purchaseId: string; position: LogPosition | null }> {
  constructor(
    readonly input: ResellerSaleFields,
    readonly caller: Caller,
  ) {
    super();
  }
}

const BASE = ['deal_id', 'transaction_reference', 'transaction_date', 'transaction_amount'];
const VOUCHER = [...BASE, 'quantity', 'first_name', 'last_name'];
const SHIPPED = [...VOUCHER, 'address_type', 'address1', 'address2', 'postal_code', 'city', 'state', 'country', 'telephone'];
const TEXT = [
  'first_name',
  'last_name',
  'address_type',
  'address1',
  'address2',
  'postal_code',
  'city',
  'state',
  'country',
  'telephone',
] as const;

/** How many times a sale starts again when its claim is given up under it (see `sell`). */
const SALE_ROUNDS = 3;

type DealView = NonNullable<Awaited<ReturnType<CatalogQueries['deal']>>>;

/** The terms one body records: amount, date and the buyer's text fields. */
function termsOf(input: ResellerSaleFields): ResaleTerms {
  const buyer = Object.fromEntries(TEXT.filter((f) => typeof input[f] === 'string').map((f) => [f, input[f] as string]));
  return { amountCents: input.transaction_amount as number, transactionDate: input.transaction_date as string, buyer };
}

/** Fields required by deal kind (part 4.6.2's table). */
function requiredResellerFields(type: string, fulfillment: string): string[] {
  if (type === 'card-linked') return BASE;
  return fulfillment === 'shipped' ? SHIPPED : VOUCHER;
}

/**
 * Records a sale a third party made and took the money for: the fields its deal kind requires,
 * then the units sold and coupons issued as for any purchase. A repeated transaction_reference from
 * the same partner answers the first purchase and records nothing new. Sold out: 422 cannot_fulfill
 * (spelled so in this call).
 */
@CommandHandler(RecordResellerPurchase)
export class RecordResellerPurchaseHandler implements ICommandHandler<RecordResellerPurchase> {
  constructor(
    private readonly store: EventStore,
    private readonly catalog: CatalogQueries,
    private readonly steps: PurchaseSteps,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async execute({ input, caller }: RecordResellerPurchase) {
    // A repeat of a recorded sale answers it whatever this body says: a retry that names a deal
    // since removed, or leaves out a field, is still the same transaction, already paid for.
    const recorded = await this.recordedSale(caller.partnerId, input.transaction_reference);
    if (recorded) return this.complete(recorded, termsOf(input), caller, input.transaction_reference as string);
    if (typeof input.deal_id !== 'string' || input.deal_id === '')
      throw new ValidationFailed([requiredTextIssue(input.deal_id, 'purchase', 'deal_id')!]);
    const view = await this.catalog.deal(input.deal_id);
    if (!view) throw new NotFound(`deal ${input.deal_id} not found`);
    const deal = view.deal!;
    const required = requiredResellerFields(deal.type, deal.fulfillment_method);
    const issues: ValidationIssue[] = [];
    for (const field of required) {
      const value = (input as Record<string, unknown>)[field];
      if (value === undefined || value === null || value === '')
        issues.push({ type: 'missing_field', resource: 'purchase', field, message: 'is required' });
    }
    const quantity = input.quantity === undefined && !required.includes('quantity') ? 1 : input.quantity;
    if (issues.length) throw new ValidationFailed(issues);

    const reference = input.transaction_reference as string;
    const asked = termsOf(input);
    // A claim given up under this request's feet (its sale refused by the request that made it)
    // starts it again, with a claim of its own; a few rounds at most.
    for (let round = 1; ; round++) {
      try {
        return await this.sell(reference, { view, quantity: quantity as number, terms: asked }, caller);
      } catch (error) {
        if (!(error instanceof ResaleClaimSuperseded) || round >= SALE_ROUNDS) throw error;
      }
    }
  }

  /**
   * Claims the reference for `asked` (or finds the sale that claimed it first, and records that
   * one, with its own terms), holds the units, marks the claim selling, and records the purchase
   * and its coupons. A refused sale gives the reference up, so that a retry is a new sale.
   */
  private async sell(reference: string, asked: { view: DealView; quantity: number; terms: ResaleTerms }, caller: Caller) {
    const now = this.clock.now();
    const context = { now, metadata: caller };
    const stream = transactionReferenceStream(caller.partnerId, reference);
    const purchaseId = this.ids.short();
    const claim = await handleCommand(
      this.store,
      stream,
      transactionReferenceDecider,
      {
        type: 'ClaimTransactionReference',
        data: {
          partnerId: caller.partnerId,
          transactionReference: reference,
          purchaseId,
          dealId: asked.view.deal!.id,
          quantity: asked.quantity,
          terms: asked.terms,
        },
      },
      context,
    );
    const owner = claim.state.purchaseId!;
    /** Gives the claim up: nothing was sold under the reference, so a retry is a new sale. */
    const giveUp = (reason: string) =>
      handleCommand(
        this.store,
        stream,
        transactionReferenceDecider,
        { type: 'ReleaseTransactionReference', data: { purchaseId: owner, reason } },
        context,
      );
    // The sale recorded under the reference: this one's, or the first's when this is a repeat.
    let sale = asked;
    if (owner !== purchaseId) {
      // A repeat: finish the first one (a crash may have stopped it) and answer it.
      if ((await this.store.readStream(purchaseStream(owner), 0)).length)
        return this.complete(owner, claim.state.terms ?? asked.terms, caller, reference);
      // The first is still being recorded (sent at the same moment), or stopped before its
      // purchase: its deal, quantity and terms are held and recorded, never this body's.
      const { dealId: firstDeal, quantity: firstQuantity, terms: firstTerms } = claim.state;
      const firstView = firstDeal === null || firstDeal === asked.view.deal!.id ? asked.view : await this.catalog.deal(firstDeal);
      if (!firstView) {
        await giveUp(`deal ${firstDeal} not found`);
        throw new NotFound(`deal ${firstDeal} not found`);
      }
      sale = { view: firstView, quantity: firstQuantity ?? asked.quantity, terms: firstTerms ?? asked.terms };
    }
    const saleDeal = sale.view.deal!;
    try {
      // Only a new sale is held to the deal's terms now: a recorded one is answered as it is.
      refuseUnsellable(sale.view, now.getTime(), RESOLD_TYPES);
      // One transaction is one buyer's (a reseller names no user of ours to count across sales).
      refuseOverLimit(sale.view, sale.quantity);
      await handleCommand(
        this.store,
        inventoryStream(saleDeal.id),
        inventoryDecider,
        { type: 'HoldUnits', data: { dealId: saleDeal.id, holdId: owner, quantity: sale.quantity } },
        context,
      );
    } catch (error) {
      if (!(error instanceof CannotFulfil)) throw error;
      // Refused: a retry (perhaps of another deal, once there is stock) is a new sale, not this one completed later.
      await giveUp(error.message);
      throw new CannotFulfilReseller(error.message);
    }
    try {
      await handleCommand(
        this.store,
        stream,
        transactionReferenceDecider,
        { type: 'MarkResaleSelling', data: { purchaseId: owner } },
        context,
      );
    } catch (error) {
      // The claim was given up meanwhile (another request's sale of it was refused): the units
      // just held go back, and the caller starts again.
      if (error instanceof ResaleClaimSuperseded) {
        await handleCommand(
          this.store,
          inventoryStream(saleDeal.id),
          inventoryDecider,
          { type: 'ReleaseHold', data: { dealId: saleDeal.id, holdId: owner, reason: 'refused' } },
          context,
        );
      }
      throw error;
    }
    const snapshot = dealSnapshot(saleDeal);
    await handleCommand(
      this.store,
      purchaseStream(owner),
      purchaseDecider,
      {
        type: 'ReservePurchase',
        data: {
          purchaseId: owner,
          partnerId: caller.partnerId,
          deal: snapshot,
          quantity: sale.quantity,
          holdId: owner,
          reservedAt: now.toISOString(),
          holdExpiresAt: new Date(holdExpiry(now.getTime())).toISOString(),
          via: 'reseller',
          transactionReference: reference,
        },
      },
      context,
    );
    return this.complete(owner, sale.terms, caller, reference);
  }

  /** The purchase recorded whole under the reference, if any (one still being recorded goes the long way). */
  private async recordedSale(partnerId: string, reference: unknown): Promise<string | null> {
    if (typeof reference !== 'string' || reference === '') return null;
    const { state: claim } = await loadAggregate(this.store, transactionReferenceStream(partnerId, reference), transactionReferenceDecider);
    if (claim.purchaseId === null) return null;
    const { state: first } = await loadAggregate(this.store, purchaseStream(claim.purchaseId), purchaseDecider);
    return first.status === 'fulfilled' ? claim.purchaseId : null;
  }

  /** The purchase's sale recorded with one body's terms, and its coupons issued (idempotent). */
  private complete(purchaseId: string, terms: ResaleTerms, caller: Caller, reference: string) {
    return this.steps
      .complete(
        { type: 'ResaleStarted', data: { purchaseId, partnerId: caller.partnerId, transactionReference: reference, terms } },
        caller,
      )
      .catch((error) => {
        throw error instanceof CannotFulfil && !(error instanceof CannotFulfilReseller) ? new CannotFulfilReseller(error.message) : error;
      });
  }
}
