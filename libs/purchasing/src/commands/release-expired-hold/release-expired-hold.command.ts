import { Clock, EventStore, handleCommand, LogPosition, OPERATOR } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { inventoryDecider } from '../../domain/inventory/inventory.decider';
import { partnerInventoryStream } from '../../domain/inventory/inventory.events';

/**
 * The scheduled release of a hold past its expiry (a no-op when it was sold or released).
 * `partnerId`: the sandbox whose own inventory of the deal holds it; none: the live deal's.
 */
export class ReleaseExpiredHold extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly dealId: string,
    readonly holdId: string,
    readonly partnerId: string | null = null,
  ) {
    super();
  }
}

@CommandHandler(ReleaseExpiredHold)
export class ReleaseExpiredHoldHandler implements ICommandHandler<ReleaseExpiredHold> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  /** `liveUntil`: the hold's expiry (epoch ms) when it is still open and live, so nothing was released. */
  async execute({ dealId, holdId, partnerId }: ReleaseExpiredHold): Promise<{ position: LogPosition | null; liveUntil: number | null }> {
    const now = this.clock.now();
    const { position, state } = await handleCommand(
      this.store,
      partnerInventoryStream(dealId, partnerId),
      inventoryDecider,
      { type: 'ReleaseExpiredHold', data: { dealId, holdId } },
      {
        now,
        metadata: { ...OPERATOR, actor: 'system' },
      },
    );
    const open = state.status === 'stocked' ? state.holds.get(holdId) : undefined;
    return { position, liveUntil: open && open.expiresAt > now.getTime() ? open.expiresAt : null };
  }
}
