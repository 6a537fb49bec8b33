/** An inventory stream's events, as the log keeps them: the type and the parsed data. */
export interface InventoryRow {
  type: string;
  data: { total?: number; holdId?: string; quantity?: number; expiresAt?: string };
}

/**
 * A deal's inventory folded from its log as an auditor would: the units stocked, sold, and held by
 * holds still open at `now`. Fails (jest's expect) on a hold sold twice.
 */
export function auditedInventory(rows: InventoryRow[], now = Date.now()): { total: number; sold: number; held: number } {
  let total = 0;
  let sold = 0;
  const open = new Map<string, { quantity: number; expiresAt: number }>();
  const soldHolds = new Set<string>();
  for (const { type, data: d } of rows) {
    if (type === 'InventoryStocked') total = d.total!;
    if (type === 'UnitsHeld') open.set(d.holdId!, { quantity: d.quantity!, expiresAt: Date.parse(d.expiresAt!) });
    if (type === 'UnitsSold') {
      expect(soldHolds.has(d.holdId!)).toBe(false);
      soldHolds.add(d.holdId!);
      sold += d.quantity!;
      open.delete(d.holdId!);
    }
    if (type === 'UnitsReleased') open.delete(d.holdId!);
  }
  const held = [...open.values()].filter((h) => h.expiresAt > now).reduce((n, h) => n + h.quantity, 0);
  return { total, sold, held };
}
