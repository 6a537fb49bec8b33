import type { Bitset } from './bitset';
import { anyLeaf } from './field-path';
import { pointsOf, Sphere } from './geo-within.operator';
import type { Change } from './sorted-index';

// Grid cells of a quarter degree (about 17 miles north to south): a city-sized circle spans a few.
const CELL = 0.25;
const ROW = Math.round(360 / CELL);
// Beyond this many cells (a continent-sized circle, or one around a pole) scanning beats the grid.
const MAX_CELLS = 4096;
// Reading cell entries in a row costs about a sixth of visiting a candidate's points: the grid wins
// until its cells hold six times as many points as there are candidates.
const CELL_ENTRIES_PER_VISIT = 6;

const latCell = (lat: number) => Math.floor((lat + 90) / CELL);
const lngCell = (lng: number) => Math.floor(((((lng + 180) % 360) + 360) % 360) / CELL) % ROW;

/** The points in one grid cell, side by side: visiting a cell reads one stretch of memory. */
interface Cell {
  /** `lng, lat` of each point. */
  coordinates: number[];
  /** The slot of each point. */
  slots: number[];
}

/**
 * The points of a `2dsphere` field as plain numbers: by slot, and in a grid of cells. Frozen
 * documents keep coordinates boxed (freezing turns an array of doubles into one of references), so
 * reading them out of every candidate costs several cache misses each; `select` reads these copies
 * instead, from the cells around the circle or from the candidates, whichever are fewer. It holds
 * every point `$geoWithin` looks at, so its selections are exact.
 */
export class GeoColumn {
  private readonly points: Array<number[] | undefined> = [];
  private readonly cells = new Map<number, Cell>();
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
      const points = this.found.length ? this.found : undefined;
      // Most writes (a sale changing a deal's figures) leave its places alone.
      if (samePoints(points, this.points[slot])) continue;
      for (const key of new Set(this.cellKeys(this.points[slot]))) {
        const cell = this.cells.get(key)!;
        const keep = cell.slots.map((s) => s !== slot);
        cell.coordinates = cell.coordinates.filter((_, i) => keep[i >> 1]);
        cell.slots = cell.slots.filter((_, i) => keep[i]);
        if (!cell.slots.length) this.cells.delete(key);
      }
      this.points[slot] = points;
      this.cellKeys(points).forEach((key, i) => {
        let cell = this.cells.get(key);
        if (!cell) this.cells.set(key, (cell = { coordinates: [], slots: [] }));
        cell.coordinates.push(points![2 * i], points![2 * i + 1]);
        cell.slots.push(slot);
      });
    }
  }

  /** Slots among `candidates` (every slot when null) with a point in `sphere`, added to `into`. */
  select(sphere: Sphere, candidates: Bitset | null, size: number, into: Bitset): Bitset {
    const near = this.near(sphere);
    const inCells = near ? near.reduce((n, cell) => n + cell.slots.length, 0) : Infinity;
    if (near && inCells < CELL_ENTRIES_PER_VISIT * (candidates ? candidates.count() : size)) {
      for (const { coordinates, slots } of near) {
        for (let i = 0; i < slots.length; i++) {
          const slot = slots[i];
          if ((candidates && !candidates.has(slot)) || into.has(slot)) continue;
          if (sphere.contains(coordinates[2 * i], coordinates[2 * i + 1])) into.add(slot);
        }
      }
      return into;
    }
    const visit = (slot: number) => {
      const points = this.points[slot];
      if (!points) return;
      for (let i = 0; i < points.length; i += 2) {
        if (sphere.contains(points[i], points[i + 1])) {
          into.add(slot);
          return;
        }
      }
    };
    if (candidates) candidates.each(visit);
    else for (let slot = 0; slot < size; slot++) visit(slot);
    return into;
  }

  /** The occupied cells covering the sphere's box, or null when they would be too many to visit. */
  private near(sphere: Sphere): Cell[] | null {
    const rows = latCell(Math.min(90, sphere.north)) - latCell(Math.max(-90, sphere.south)) + 1;
    const columns = 2 * sphere.lngGap >= 360 ? ROW : lngCell(sphere.lng + sphere.lngGap) - lngCell(sphere.lng - sphere.lngGap) + 1;
    const across = columns > 0 ? Math.min(columns, ROW) : columns + ROW;
    if (rows <= 0) return [];
    if (rows * across > MAX_CELLS) return null;
    const found: Cell[] = [];
    const first = latCell(Math.max(-90, sphere.south));
    const west = across === ROW ? 0 : lngCell(sphere.lng - sphere.lngGap);
    for (let row = first; row < first + rows; row++) {
      for (let c = 0; c < across; c++) {
        const cell = this.cells.get(row * ROW + ((west + c) % ROW));
        if (cell) found.push(cell);
      }
    }
    return found;
  }

  /** The cell of each point of `points` (`lng, lat` pairs). */
  private cellKeys(points: number[] | undefined): number[] {
    const keys: number[] = [];
    for (let i = 0; points && i < points.length; i += 2)
      keys.push(latCell(Math.max(-90, Math.min(90, points[i + 1]))) * ROW + lngCell(points[i]));
    return keys;
  }
}

function samePoints(a: number[] | undefined, b: number[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
