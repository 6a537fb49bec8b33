import { CatalogQueries } from '@deals/catalog';
import {
  CannotFulfil,
  CannotFulfilReseller,
  Clock,
  EventStore,
  IdGenerator,
  loadAggregate,
  LogPosition,
  NotFound,
  PartnerCaller,
  requiredTextIssue,
  ValidationFailed,
  ValidationIssue,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { purchaseDecider } from '../../domain/purchase/purchase.decider';
import { purchaseStream } from '../../domain/purchase/purchase.events';
import { RESALE_BUYER_FIELDS } from '../../domain/purchase/resale-buyer';
import {
  ResaleClaimSuperseded,
  ResaleTerms,
  transactionReferenceDecider,
  transactionReferenceStream,
} from '../../domain/purchase/resale-claim';
import { PurchaseSteps } from '../purchase-steps/purchase-steps';
import { resoldDeal } from '../purchase-steps/resale-steps';

/** The reseller sale's fields as the request schema reads them: each checked for its form, none yet required. */
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

/** POST /api/v3/resellers/purchases. */
export class RecordResellerPurchase extends Command<{ purchaseId: string; position: LogPosition | null }> {
  constructor(
    readonly input: ResellerSaleFields,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

const BASE = ['deal_id', 'transaction_reference', 'transaction_date', 'transaction_amount'];
const VOUCHER = [...BASE, 'quantity', 'first_name', 'last_name'];
const SHIPPED = [...VOUCHER, 'address_type', 'address1', 'address2', 'postal_code', 'city', 'state', 'country', 'telephone'];
/** How many times a sale starts again when its claim is given up under it (see `execute`). */
const SALE_ROUNDS = 3;

/** The terms one body records: amount, date and the buyer's text fields. */
function termsOf(input: ResellerSaleFields): ResaleTerms {
  const buyer = Object.fromEntries(RESALE_BUYER_FIELDS.filter((f) => typeof input[f] === 'string').map((f) => [f, input[f] as string]));
  return { amountCents: input.transaction_amount as number, transactionDate: input.transaction_date as string, buyer };
}

/** Fields required by deal kind. */
function requiredResellerFields(type: string, fulfillment: string): string[] {
  if (type === 'card-linked') return BASE;
  return fulfillment === 'shipped' ? SHIPPED : VOUCHER;
}

/** This call spells the refusal `cannot_fulfill`. */
const asResellers = (error: Error): Error =>
  error instanceof CannotFulfil && !(error instanceof CannotFulfilReseller) ? new CannotFulfilReseller(error.message) : error;

/**
 * Records a sale a third party made and took the money for: the fields its deal kind requires,
 * then the purchase workflow (see `resale-start.ts`): the reference claimed, the units held and
 * sold, the coupons issued. A repeated transaction_reference from the same partner answers the
 * first purchase and records nothing new. Sold out: 422 cannot_fulfill (spelled so in this call).
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
    const { partnerId } = caller;
    const transactionReference = input.transaction_reference as string;
    const terms = termsOf(input);
    // A repeat of a recorded sale answers it whatever this body says: a retry that names a deal
    // since removed, or leaves out a field, is still the same transaction, already paid for.
    const recorded = await this.recordedSale(partnerId, input.transaction_reference);
    if (recorded)
      return this.steps
        .complete({ type: 'ResaleStarted', data: { purchaseId: recorded, partnerId, transactionReference, terms } }, caller)
        .catch((error: Error) => {
          throw asResellers(error);
        });
    const { view, quantity } = await this.checked(input);
    // A claim given up under this request's feet (its sale refused by the request that made it)
    // starts it again, with a claim of its own; a few rounds at most.
    for (let round = 1; ; round++) {
      const now = this.clock.now();
      // The deal is refused only once the claim is this request's: a repeat completes the first sale.
      const deal = resoldDeal(view, quantity, now);
      const purchaseId = this.ids.short();
      const answer = await this.steps.run(
        { type: 'ResaleRequested', data: { purchaseId, partnerId, transactionReference, dealId: view.deal!.id, quantity, terms, deal } },
        caller,
        now,
      );
      if (answer.outcome === 'sold') return { purchaseId: answer.purchaseId, position: answer.position };
      if (answer.outcome === 'settled') throw new Error(`purchase ${purchaseId}: a resale was answered as a settling`);
      if (!(answer.error instanceof ResaleClaimSuperseded) || round >= SALE_ROUNDS) throw asResellers(answer.error);
    }
  }

  /** The deal and the quantity, once the fields its kind requires are there. */
  private async checked(input: ResellerSaleFields) {
    if (typeof input.deal_id !== 'string' || input.deal_id === '')
      throw new ValidationFailed([requiredTextIssue(input.deal_id, 'purchase', 'deal_id')!]);
    const view = await this.catalog.deal(input.deal_id);
    if (!view) throw new NotFound('deal not found');
    const required = requiredResellerFields(view.deal!.type, view.deal!.fulfillment_method);
    const issues: ValidationIssue[] = [];
    for (const field of required) {
      const value = (input as Record<string, unknown>)[field];
      if (value === undefined || value === null || value === '')
        issues.push({ type: 'missing_field', resource: 'purchase', field, message: 'is required' });
    }
    if (issues.length) throw new ValidationFailed(issues);
    return { view, quantity: (input.quantity === undefined && !required.includes('quantity') ? 1 : input.quantity) as number };
  }

  /** The purchase recorded whole under the reference, if any (one still being recorded goes the long way). */
  private async recordedSale(partnerId: string, reference: unknown): Promise<string | null> {
    if (typeof reference !== 'string' || reference === '') return null;
    const { state: claim } = await loadAggregate(this.store, transactionReferenceStream(partnerId, reference), transactionReferenceDecider);
    // A reference given up was never the sale's: its purchase was refused before it was reserved.
    if (claim.status === 'free') return null;
    const { state: first } = await loadAggregate(this.store, purchaseStream(claim.purchaseId), purchaseDecider);
    return first.status === 'fulfilled' ? claim.purchaseId : null;
  }
}
