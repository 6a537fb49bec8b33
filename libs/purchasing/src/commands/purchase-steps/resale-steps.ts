import { CatalogQueries, DealDetails } from '@deals/catalog';
import { CannotFulfil, EventStore, handleCommand, handleCommands } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { inventoryDecider } from '../../domain/inventory/inventory.decider';
import { partnerInventoryStream } from '../../domain/inventory/inventory.events';
import { purchaseDecider } from '../../domain/purchase/purchase.decider';
import { dealSnapshot, purchaseStream } from '../../domain/purchase/purchase.events';
import { ResaleClaimSuperseded, transactionReferenceDecider, transactionReferenceStream } from '../../domain/purchase/resale-claim';
import type { ResaleStartCommand, ResaleStartInput, ResoldDeal } from '../../domain/purchase-workflow/resale-start';
import type { PartnerContext } from './coupon-issuer';
import { holdAs } from './partner-inventory';
import { refuseOverLimit, refuseUnsellable, RESOLD_TYPES } from './sale-rules';

/**
 * A resale's deal as the workflow takes it: its snapshot, and the refusal of `quantity` of it at
 * `now` (null: sold), in the sale rules' words.
 */
export function resoldDeal(view: DealDetails, quantity: number, now: Date): ResoldDeal {
  const snapshot = dealSnapshot(view.deal!);
  try {
    refuseUnsellable(view, now.getTime(), RESOLD_TYPES);
    // One transaction is one buyer's (a reseller names no user of ours to count across sales).
    refuseOverLimit(view, quantity);
    return { snapshot, refusal: null };
  } catch (error) {
    if (!(error instanceof CannotFulfil)) throw error;
    return { snapshot, refusal: error.message };
  }
}

/**
 * Carries out the commands of a resale's start (see `resale-start.ts`) for `PurchaseSteps`: the
 * transaction reference's through its decider on the reference's stream; the hold, the claim marked
 * selling and the reservation as one unit of work. A hold refused for want of units, and a claim
 * lost meanwhile, are inputs of their own.
 */
@Injectable()
export class ResaleSteps {
  constructor(
    private readonly store: EventStore,
    private readonly catalog: CatalogQueries,
  ) {}

  async perform(command: ResaleStartCommand, context: PartnerContext): Promise<ResaleStartInput> {
    const none = {} as Record<string, never>;
    switch (command.type) {
      case 'ClaimTransactionReference': {
        const { partnerId, transactionReference, purchaseId } = command.data;
        const stream = transactionReferenceStream(partnerId, transactionReference);
        const { state: claim } = await handleCommand(this.store, stream, transactionReferenceDecider, command, context);
        // A free reference is claimed by the command: it is this sale's now, or an earlier one's.
        if (claim.status === 'free') throw new Error('transactionReference: a free reference is claimed by the command');
        const owner = claim.purchaseId;
        if (owner === purchaseId) return { type: 'ReferenceClaimed', data: none };
        const reserved = (await this.store.readStream(purchaseStream(owner), 0)).length > 0;
        const { dealId, quantity, terms } = claim;
        return { type: 'ReferenceClaimedBefore', data: { purchaseId: owner, dealId, quantity, terms, reserved } };
      }
      case 'CheckResaleDeal': {
        const view = await this.catalog.deal(command.data.dealId);
        return { type: 'ResaleDealChecked', data: { deal: view ? resoldDeal(view, command.data.quantity, context.now) : null } };
      }
      case 'StartResale': {
        const { hold, mark, reserve } = command.data;
        const { partnerId } = context.metadata;
        try {
          await handleCommands(
            this.store,
            [
              {
                // The reseller's own units: a sandbox's come from its own inventory of the deal.
                streamId: partnerInventoryStream(hold.dealId, partnerId),
                decider: inventoryDecider,
                command: await holdAs(this.store, { type: 'HoldUnits', data: hold }, partnerId),
                lane: true,
              },
              {
                streamId: transactionReferenceStream(mark.partnerId, mark.transactionReference),
                decider: transactionReferenceDecider,
                command: { type: 'MarkResaleSelling', data: { purchaseId: mark.purchaseId } },
              },
              // Not on a fresh stream: the same sale sent twice at once reserves it once (see the purchase decider).
              {
                streamId: purchaseStream(reserve.purchaseId),
                decider: purchaseDecider,
                command: { type: 'ReservePurchase', data: reserve },
              },
            ],
            context,
          );
          return { type: 'ResaleReserved', data: none };
        } catch (error) {
          if (error instanceof ResaleClaimSuperseded) return { type: 'ReferenceClaimSuperseded', data: { error } };
          if (error instanceof CannotFulfil) return { type: 'ResaleUnitsRefused', data: { error } };
          throw error;
        }
      }
      case 'ReleaseTransactionReference': {
        const { partnerId, transactionReference, purchaseId, reason } = command.data;
        const release = { type: 'ReleaseTransactionReference', data: { purchaseId, reason } } as const;
        await handleCommand(
          this.store,
          transactionReferenceStream(partnerId, transactionReference),
          transactionReferenceDecider,
          release,
          context,
        );
        return { type: 'ReferenceGivenUp', data: none };
      }
    }
  }
}
