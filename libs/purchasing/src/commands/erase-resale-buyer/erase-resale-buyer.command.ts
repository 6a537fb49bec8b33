import {
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  loadAggregate,
  LogPosition,
  NotFound,
  PersonalDataEventStore,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EraseResaleBuyer as EraseResaleBuyerCommand, Purchase, purchaseDecider } from '../../domain/purchase/purchase.decider';
import { purchaseStream } from '../../domain/purchase/purchase.events';
import { resaleBuyerSubject } from '../../domain/purchase/resale-buyer';

/**
 * DELETE /api/v3/resellers/purchases/:purchase_id/buyer (its partner's), or `resellers:erase-buyer`
 * (an operator's, `partnerId` null: any partner's sale).
 */
export class EraseResaleBuyer extends Command<{ purchaseId: string; erasedAt: string; position: LogPosition | null }> {
  constructor(
    readonly purchaseId: string,
    readonly partnerId: string | null,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

/**
 * Erases a reseller sale's buyer for good: the erasure recorded on the purchase's stream (who asked,
 * when), then the key of the sale's transaction deleted, so that every event that carried the buyer
 * (each claim of the reference, the sale) reads without it, in every process, view and rebuild.
 * The purchase, its coupons and amounts stay. Asked again, it answers the first erasure's time and
 * deletes the key if a stop left it (a start does the same: {@link FinishResaleBuyerErasures}).
 */
@CommandHandler(EraseResaleBuyer)
export class EraseResaleBuyerHandler implements ICommandHandler<EraseResaleBuyer> {
  constructor(
    private readonly store: EventStore,
    private readonly personalData: PersonalDataEventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ purchaseId, partnerId, caller }: EraseResaleBuyer) {
    const command: EraseResaleBuyerCommand = {
      type: 'EraseResaleBuyer',
      data: { purchaseId, partnerId, by: partnerId === null ? 'operator' : 'partner' },
    };
    const now = this.clock.now();
    const current = await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider);
    // Refuses another partner's sale, one that never was, or one that is not a reseller's, before anything is written.
    purchaseDecider.decide(command, current.state, now);
    const metadata = { ...caller, partnerId: resale(current.state).partnerId };
    const erased = await handleCommand(this.store, purchaseStream(purchaseId), purchaseDecider, command, { now, metadata });
    const { partnerId: owner, transactionReference, buyerErasedAt } = resale(erased.state);
    await this.personalData.erase(resaleBuyerSubject(owner, transactionReference!), new Date(buyerErasedAt!));
    return { purchaseId, erasedAt: buyerErasedAt!, position: erased.position };
  }
}

/** The purchase as the reseller's sale it is (the decision refused any other). */
function resale(purchase: Purchase) {
  if (purchase.status === 'none' || purchase.kind !== 'resale') throw new NotFound('purchase not found');
  return purchase;
}
