import type { Bitset } from './bitset';
import { anyLeaf } from './field-path';
import { pointsOf } from './geo-within.operator';
import type { Change } from './sorted-index';

/**
 * The points of a `2dsphere` field, by slot, as plain numbers. Frozen documents keep coordinates
 * boxed (freezing turns an array of doubles into one of references), so reading them out of every
 * candidate costs several cache misses each; this copy makes `$geoWithin` a scan of small arrays.
 * It holds every point `$geoWithin` would look at, so a selection from it is exact.
 */
export class GeoColumn {
  private readonly points: Array<number[] | undefined> = [];
  private readonly collect: (doc: Record<string, unknown>) => boolean;
  private found: number[] = [];

  constructor(readonly field: string) {
    this.collect = anyLeaf(field.split('.'), (leaf) => {
      pointsOf(leaf, this.found);
      return false;
    });
  }

  apply(changes: readonly Change[]): void {
    for (const { after, slot } of changes) {
      this.found = [];
      this.collect(after as unknown as Record<string, unknown>);
      this.points[slot] = this.found.length ? this.found : undefined;
    }
  }

  /** Slots among `candidates` (every slot when null) with a point where `within` holds, added to `into`. */
  select(within: (lng: number, lat: number) => boolean, candidates: Bitset | null, size: number, into: Bitset): Bitset {
    const visit = (slot: number) => {
      const points = this.points[slot];
      if (!points) return;
      for (let i = 0; i < points.length; i += 2) {
        if (within(points[i], points[i + 1])) {
          into.add(slot);
          return;
        }
      }
    };
    if (candidates) candidates.each(visit);
    else for (let slot = 0; slot < size; slot++) visit(slot);
    return into;
  }
}
