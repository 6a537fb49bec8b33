import { CommandContext, EventStore, handleCommand, isSandbox, loadCachedAggregate } from '@deals/kernel';
import { HoldUnits, inventoryDecider } from '../../domain/inventory/inventory.decider';
import { inventoryStream, partnerInventoryStream } from '../../domain/inventory/inventory.events';

/**
 * The hold as `partnerId` takes it: as it is for a live partner; for a sandbox, with the stocking
 * of its copy of the deal's inventory (`SandboxStock`), so that its first hold stocks the copy with
 * the total the live deal is stocked with. That total is read from the live inventory, which a
 * sandbox never writes; a live deal not stocked yet gives its sandboxes no units either.
 */
export async function holdAs(store: EventStore, command: HoldUnits, partnerId: string): Promise<HoldUnits> {
  if (!isSandbox(partnerId)) return command;
  const { state: live } = await loadCachedAggregate(store, inventoryStream(command.data.dealId), inventoryDecider);
  return live.status === 'stocked' ? { ...command, data: { ...command.data, stock: { total: live.total, sandbox: partnerId } } } : command;
}

/** Takes a hold on `partnerId`'s inventory of the command's deal (`partnerInventoryStream`). */
export async function holdPartnerUnits(store: EventStore, command: HoldUnits, partnerId: string, context: CommandContext) {
  const hold = await holdAs(store, command, partnerId);
  return handleCommand(store, partnerInventoryStream(command.data.dealId, partnerId), inventoryDecider, hold, context);
}
