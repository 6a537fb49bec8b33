import { Clock, CommandCaller, EventStore, handleCommand, loadAggregate, LogPosition } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { inventoryDecider } from '../domain/inventory/inventory.decider';
import { inventoryStream } from '../domain/inventory/inventory.events';

/**
 * Sets the total units of a deal. `checkOnly`: decides on the inventory as it is and writes
 * nothing (a refusal throws), so that an import can refuse a record before writing any of it.
 */
export class StockInventory extends Command<{ position: LogPosition | null }> {
  constructor(readonly dealId: string, readonly total: number, readonly caller: CommandCaller, readonly checkOnly = false) {
    super();
  }
}

@CommandHandler(StockInventory)
export class StockInventoryHandler implements ICommandHandler<StockInventory> {
  constructor(private readonly store: EventStore, private readonly clock: Clock) {}

  async execute({ dealId, total, caller, checkOnly }: StockInventory) {
    const command = { type: 'StockUnits' as const, data: { dealId, total } };
    if (checkOnly) {
      const { state } = await loadAggregate(this.store, inventoryStream(dealId), inventoryDecider);
      inventoryDecider.decide(command, state, this.clock.now());
      return { position: null };
    }
    const { position } = await handleCommand(this.store, inventoryStream(dealId), inventoryDecider, command, {
      now: this.clock.now(), metadata: caller,
    });
    return { position };
  }
}
