import { Map as ImmutableMap } from 'immutable';

/** An open hold: its units, the instant it expires (ms since the epoch), and its buyer when known. */
export interface Hold {
  quantity: number;
  expiresAt: number;
  buyer?: string;
}

/**
 * Units of open holds by the instant they expire. Holds expire on whole seconds (`holdExpiry`), so
 * this has at most one entry per second in which open holds expire (about 300 while they are
 * released on time), however many holds are open.
 */
export type ExpiryIndex = ImmutableMap<number, number>;

/** Units of open holds that expired by `now` (`expiresAt <= now`). */
export function expiredHeld(expiring: ExpiryIndex, now: number): number {
  let expired = 0;
  expiring.forEach((units, expiresAt) => {
    if (expiresAt <= now) expired += units;
  });
  return expired;
}

/** Removes `holdId` from the map at `key`, and the key once its map is empty. */
export function withoutHold(
  index: ImmutableMap<string, ImmutableMap<string, Hold>>,
  key: string,
  holdId: string,
): ImmutableMap<string, ImmutableMap<string, Hold>> {
  const holds = index.get(key);
  if (!holds) return index;
  const rest = holds.delete(holdId);
  return rest.size === 0 ? index.delete(key) : index.set(key, rest);
}

/** `units` fewer at `expiresAt`, and no entry once none are left. */
export function fewer(expiring: ExpiryIndex, expiresAt: number, units: number): ExpiryIndex {
  const left = (expiring.get(expiresAt) ?? 0) - units;
  return left > 0 ? expiring.set(expiresAt, left) : expiring.delete(expiresAt);
}
