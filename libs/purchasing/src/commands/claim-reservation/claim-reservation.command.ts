import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import { Clock, EventStore, loadAggregate, NotFound, PartnerCaller, ValidationFailed } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { notAReservation, purchaseDecider } from '../../domain/purchase/purchase.decider';
import { purchaseStream } from '../../domain/purchase/purchase.events';
import { PurchaseOutcome } from '../purchase-steps/purchase-outcome';
import { PurchaseSteps } from '../purchase-steps/purchase-steps';
import { refuseExpiredVouchers } from '../purchase-steps/sale-rules';

/** PUT /purchases/:id/claim: the partner took the payment; sell the units to the user. */
export class ClaimReservation extends Command<PurchaseOutcome> {
  constructor(
    readonly purchaseId: string,
    readonly userId: string,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

/**
 * Claim: the partner took the payment; the purchase workflow sells the units (on a fresh hold when
 * the reservation lapsed or was released, which fails if the deal sold out) and issues the coupons.
 */
@CommandHandler(ClaimReservation)
export class ClaimReservationHandler implements ICommandHandler<ClaimReservation> {
  constructor(
    private readonly store: EventStore,
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly steps: PurchaseSteps,
    private readonly clock: Clock,
  ) {}

  async execute({ purchaseId, userId, caller }: ClaimReservation) {
    const { state: purchase } = await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider);
    if (purchase.status === 'none' || purchase.partnerId !== caller.partnerId) throw new NotFound('purchase not found');
    // Checked before anything is sold: a card purchase or a resale completes on its own path.
    const refusal = notAReservation(purchase);
    if (refusal) throw refusal;
    if (!(await this.accounts.user(caller.partnerId, userId))) throw new NotFound('user not found');
    if (purchase.status === 'fulfilled' && purchase.holder !== userId) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'purchase', field: 'id', message: 'is already claimed by another user' }]);
    }
    // The reserve knew no user, so the sale counts the claim against the deal's per-user limit
    // (its current terms: the purchase's snapshot keeps none). A repeated claim by its own user is
    // the same sale again, already counted, so it stays idempotent; a refused claim writes nothing.
    const view = await this.catalog.deal(purchase.dealId);
    // Vouchers that have expired could never be redeemed: not sold, even on a live hold (a claim
    // already made is answered again as it was).
    if (purchase.status !== 'fulfilled' && view) refuseExpiredVouchers(view, this.clock.now().getTime());
    return this.steps.complete(
      { type: 'ReservationClaimStarted', data: { purchaseId, partnerId: caller.partnerId, userId, maxPerUser: view?.deal?.max_per_user } },
      caller,
    );
  }
}
