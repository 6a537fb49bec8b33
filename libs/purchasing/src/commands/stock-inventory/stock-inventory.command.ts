import { Clock, CommandCaller, EventStore, handleCommand, LogPosition } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { inventoryDecider } from '../../domain/inventory/inventory.decider';
import { inventoryStream } from '../../domain/inventory/inventory.events';

/** Sets the total units of a deal: its live inventory's (a sandbox's copy is stocked by its first hold, see `SandboxStock`). */
export class StockInventory extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly dealId: string,
    readonly total: number,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(StockInventory)
export class StockInventoryHandler implements ICommandHandler<StockInventory> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ dealId, total, caller }: StockInventory) {
    const { position } = await handleCommand(
      this.store,
      inventoryStream(dealId),
      inventoryDecider,
      { type: 'StockUnits', data: { dealId, total } },
      {
        now: this.clock.now(),
        metadata: caller,
      },
    );
    return { position };
  }
}
