import { Clock, EventStore, handleCommand, laterPosition, loadAggregate, LogPosition, NotFound } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { inventoryDecider } from '../../domain/inventory/inventory.decider';
import { partnerInventoryStream } from '../../domain/inventory/inventory.events';
import { notAReservation, purchaseDecider } from '../../domain/purchase/purchase.decider';
import { purchaseStream } from '../../domain/purchase/purchase.events';
import type { PartnerCaller } from '@deals/kernel';
import { PurchaseOutcome } from '../purchase-steps/purchase-outcome';

/** PUT /purchases/:id/release: the payment failed; give the units back. */
export class ReleaseReservation extends Command<PurchaseOutcome> {
  constructor(
    readonly purchaseId: string,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(ReleaseReservation)
export class ReleaseReservationHandler implements ICommandHandler<ReleaseReservation> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  /**
   * The units go back first, then the purchase is marked released: a claim running at the same
   * time has either sold them already (the release is refused, and the claim answers fulfilled) or
   * finds them released (it buys fresh units, and this release is then refused as claimed).
   * A release is never answered while the claim keeps its units.
   */
  async execute({ purchaseId, caller }: ReleaseReservation) {
    const context = { now: this.clock.now(), metadata: caller };
    const { state: before } = await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider);
    if (before.status === 'none' || before.partnerId !== caller.partnerId) throw new NotFound('purchase not found');
    const refusal = notAReservation(before);
    if (refusal) throw refusal;
    let inventory: { position: LogPosition | null } = { position: null };
    if (before.status === 'reserved' || before.status === 'released') {
      const dealId = before.dealId;
      inventory = await handleCommand(
        this.store,
        partnerInventoryStream(dealId, before.partnerId),
        inventoryDecider,
        { type: 'ReleaseHold', data: { dealId, holdId: before.holdId, reason: 'released' } },
        context,
      );
    }
    const released = await handleCommand(
      this.store,
      purchaseStream(purchaseId),
      purchaseDecider,
      { type: 'ReleasePurchase', data: { purchaseId, partnerId: caller.partnerId } },
      context,
    );
    return { purchaseId, position: laterPosition(released.position, inventory.position) };
  }
}
