import { applyEvents, RecordedEvent } from '@deals/kernel';
import { SandboxHolds, sandboxHoldsProjection } from './sandbox-holds.projection';

const SANDBOX = '6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40_test';
const STREAM = `inventory-spa~${SANDBOX}`;
let n = 0;
const recorded = (streamId: string, type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: `e${++n}`,
  type,
  data: { dealId: 'spa', expiresAt: '2026-01-01T00:05:00Z', ...data },
  metadata: { occurredAt: '2026-01-01T00:00:00Z' },
  streamId,
  revision: 0,
  position: String(n).padStart(20, '0'),
});
const mark = { sandbox: SANDBOX };

describe('sandbox holds projection', () => {
  it("counts the units of a sandbox's open holds on its copy of a deal's inventory", () => {
    const events = [
      recorded(STREAM, 'UnitsHeld', { holdId: 'h1', quantity: 3, ...mark }),
      recorded(STREAM, 'UnitsHeld', { holdId: 'h2', quantity: 2, ...mark }),
      recorded(STREAM, 'UnitsSold', { holdId: 'h1', quantity: 3, ...mark }),
    ];
    expect(applyEvents(sandboxHoldsProjection, new Map(), events)).toEqual([
      { _id: STREAM, _pos: events[2].position, dealId: 'spa', partnerId: SANDBOX, held: 2 },
    ]);
    const [open] = applyEvents(sandboxHoldsProjection, new Map(), events);
    const released = recorded(STREAM, 'UnitsReleased', { holdId: 'h2', quantity: 2, reason: 'expired', ...mark });
    expect(applyEvents(sandboxHoldsProjection, new Map<string, SandboxHolds>([[STREAM, open]]), [released])).toEqual([
      { ...open, _pos: released.position, held: 0 },
    ]);
  });

  it("leaves a live deal's inventory events out", () => {
    const live = [
      recorded('inventory-spa', 'UnitsHeld', { holdId: 'h1', quantity: 3 }),
      recorded('inventory-spa', 'UnitsReleased', { holdId: 'h1', quantity: 3, reason: 'released' }),
    ];
    expect(applyEvents(sandboxHoldsProjection, new Map(), live)).toEqual([]);
  });
});
