import { defineProjection, RecordedEvent, ViewDocument } from '@deals/kernel';
import type { SandboxMark, UnitsHeld, UnitsReleased, UnitsSold } from '../../domain/inventory/inventory.events';

/**
 * "Which sandboxes' inventories of a deal have units in open holds?" One document a sandbox's copy
 * of a deal's inventory (`partnerInventoryStream`, its id): what `OpenHolds` lists a sandbox's holds
 * from, as it lists the live ones from the deal view, which leaves sandboxes out.
 */
export interface SandboxHolds extends ViewDocument {
  dealId: string;
  /** The sandbox (its partner id). */
  partnerId: string;
  /** Units in open holds, lapsed ones too until their release is recorded. */
  held: number;
}

export const SANDBOX_HOLDS = 'sandbox_holds';

type Handled = UnitsHeld | UnitsSold | UnitsReleased;

const sandboxMarkOf = (event: RecordedEvent) => (event.data as SandboxMark).sandbox;

export const sandboxHoldsProjection = defineProjection<SandboxHolds>({
  name: SANDBOX_HOLDS,
  handles: ['UnitsHeld', 'UnitsSold', 'UnitsReleased'],
  // Read by a starting process only: no answer waits for it.
  answersWait: false,
  indexes: [{ keys: { held: 1 } }],
  // A live deal's inventory events (no mark) are the deal view's, not this one's.
  documentIds: (event) => (sandboxMarkOf(event) === undefined ? [] : [event.streamId]),
  evolve(view, recorded, id) {
    const event = recorded as unknown as Handled;
    // The inventory records a sale or release of an open hold only, once: each closes what one hold held.
    const change = event.type === 'UnitsHeld' ? event.data.quantity : -event.data.quantity;
    return {
      _id: id,
      _pos: recorded.position,
      dealId: event.data.dealId,
      partnerId: sandboxMarkOf(recorded)!,
      held: Math.max(0, (view?.held ?? 0) + change),
    };
  },
});
