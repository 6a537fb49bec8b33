import { projectionSpec, SpecEvent } from '@deals/testing';
import { sandboxHoldsProjection } from './sandbox-holds.projection';

const SANDBOX = '6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40_test';
const STREAM = `inventory-spa~${SANDBOX}`;
const spec = projectionSpec(sandboxHoldsProjection, { occurredAt: '2026-01-01T00:00:00Z' });
const event = (streamId: string, type: string, data: Record<string, unknown>): SpecEvent => ({
  streamId,
  type,
  data: { dealId: 'spa', expiresAt: '2026-01-01T00:05:00Z', ...data },
});
const mark = { sandbox: SANDBOX };

describe('sandbox holds projection', () => {
  it("counts the units of a sandbox's open holds on its copy of a deal's inventory", () => {
    const sold = event(STREAM, 'UnitsSold', { holdId: 'h1', quantity: 3, ...mark });
    const held = spec.when(
      event(STREAM, 'UnitsHeld', { holdId: 'h1', quantity: 3, ...mark }),
      event(STREAM, 'UnitsHeld', { holdId: 'h2', quantity: 2, ...mark }),
      sold,
    );
    const open = { _id: STREAM, _pos: held.positionOf(sold), dealId: 'spa', partnerId: SANDBOX, held: 2 };
    held.thenChanged(open);
    const released = event(STREAM, 'UnitsReleased', { holdId: 'h2', quantity: 2, reason: 'expired', ...mark });
    const after = held.when(released);
    after.thenChanged({ ...open, _pos: after.positionOf(released), held: 0 });
  });

  it("leaves a live deal's inventory events out", () => {
    spec
      .when(
        event('inventory-spa', 'UnitsHeld', { holdId: 'h1', quantity: 3 }),
        event('inventory-spa', 'UnitsReleased', { holdId: 'h1', quantity: 3, reason: 'released' }),
      )
      .thenChanged();
  });
});
