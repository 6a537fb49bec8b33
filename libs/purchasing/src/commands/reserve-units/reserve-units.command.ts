import { CatalogQueries } from '@deals/catalog';
import { Clock, EventStore, handleCommands, IdGenerator, laterPosition, NotFound } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { inventoryDecider } from '../../domain/inventory/inventory.decider';
import { holdExpiry, partnerInventoryStream } from '../../domain/inventory/inventory.events';
import { purchaseDecider } from '../../domain/purchase/purchase.decider';
import { dealSnapshot, purchaseStream } from '../../domain/purchase/purchase.events';
import { KeyedPurchases } from '../purchase-steps/keyed-purchases';
import { holdAs } from '../purchase-steps/partner-inventory';
import { refuseOverLimit, refuseUnchargeableAmount, refuseUnsellable, SOLD_TYPES } from '../purchase-steps/sale-rules';
import type { IdempotentRun, PartnerCaller } from '@deals/kernel';
import { PurchaseOutcome } from '../purchase-steps/purchase-outcome';

/** POST /purchases/reserve: hold units for five minutes. */
export class ReserveUnits extends Command<PurchaseOutcome> {
  constructor(
    readonly dealId: string,
    readonly quantity: number,
    readonly caller: PartnerCaller,
    /** The request's run under its `Idempotency-Key`, which names the reservation; null without one. */
    readonly keyed: IdempotentRun | null = null,
  ) {
    super();
  }
}

@CommandHandler(ReserveUnits)
export class ReserveUnitsHandler implements ICommandHandler<ReserveUnits> {
  constructor(
    private readonly store: EventStore,
    private readonly catalog: CatalogQueries,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly keyed: KeyedPurchases,
  ) {}

  async execute({ dealId, quantity, caller, keyed: run }: ReserveUnits) {
    const keyed = run === null ? null : await this.keyed.reservation(run, () => this.ids.short());
    if (keyed?.resumed) return { purchaseId: keyed.purchaseId, position: keyed.position };
    const now = this.clock.now();
    const view = await this.catalog.deal(dealId);
    if (!view) throw new NotFound('deal not found');
    const deal = view.deal!;
    refuseUnsellable(view, now.getTime(), SOLD_TYPES);
    refuseOverLimit(view, quantity);
    refuseUnchargeableAmount(view, quantity, 'num_bought');
    const purchaseId = keyed?.purchaseId ?? this.ids.short();
    const context = { now, metadata: caller };
    // One unit of work, in the turns of the deal's inventory: the reservation and its hold (a
    // sandbox's of its own inventory of the deal), both written or neither (units gone: nothing).
    const hold = await holdAs(this.store, { type: 'HoldUnits', data: { dealId: deal.id, holdId: purchaseId, quantity } }, caller.partnerId);
    const [reserved, held] = await handleCommands(
      this.store,
      [
        {
          streamId: purchaseStream(purchaseId),
          decider: purchaseDecider,
          command: {
            type: 'ReservePurchase',
            data: {
              purchaseId,
              partnerId: caller.partnerId,
              deal: dealSnapshot(deal),
              quantity,
              holdId: purchaseId,
              reservedAt: now.toISOString(),
              holdExpiresAt: new Date(holdExpiry(now.getTime())).toISOString(),
            },
          },
          freshStream: true,
        },
        { streamId: partnerInventoryStream(deal.id, caller.partnerId), decider: inventoryDecider, command: hold, lane: true },
      ],
      context,
    );
    return { purchaseId, position: laterPosition(held.position, reserved.position) };
  }
}
