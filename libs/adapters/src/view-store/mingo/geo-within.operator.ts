import { angularDistance } from '@deals/kernel';
import { Context } from 'mingo';
import { anyLeaf } from './field-path';

type Point = [number, number];

const isPair = (value: unknown): value is Point =>
  Array.isArray(value) && value.length === 2 && typeof value[0] === 'number' && typeof value[1] === 'number';

function pointOf(value: unknown): Point | null {
  if (isPair(value)) return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const { type, coordinates } = value as { type?: unknown; coordinates?: unknown };
  return type === 'Point' && isPair(coordinates) ? coordinates : null;
}

const DEGREE = Math.PI / 180;
// The latitude gap alone bounds the great-circle angle from below; the margin absorbs rounding.
const MARGIN = 1e-9;

/**
 * The widest longitude gap (radians) a point within `radians` of latitude `lat` can have, or
 * Infinity near the poles. From the haversine, sin²(gap/2)·cos(lat)·cos(lat') ≤ sin²(radians/2)
 * for any latitude lat' of the band the latitude check lets through.
 */
function longitudeGap(lat: number, radians: number): number {
  const band = radians + MARGIN;
  if (Math.abs(lat * DEGREE) + band >= Math.PI / 2) return Infinity;
  const narrowest = Math.min(Math.cos(lat * DEGREE - band), Math.cos(lat * DEGREE + band));
  const ratio = Math.sin(radians / 2) ** 2 / (Math.cos(lat * DEGREE) * narrowest);
  return ratio >= 1 ? Infinity : 2 * Math.asin(Math.sqrt(ratio)) * (1 + 1e-9) + MARGIN;
}

/** Appends the `[lng, lat]` of `leaf` (a point, or each point of an array of them) to `out`. */
export function pointsOf(leaf: unknown, out: number[]): void {
  const point = pointOf(leaf);
  if (point) out.push(point[0], point[1]);
  else if (Array.isArray(leaf)) {
    for (const item of leaf) {
      const p = pointOf(item);
      if (p) out.push(p[0], p[1]);
    }
  }
}

/** `$geoWithin: {$centerSphere: ...}` as a test of one point, with a box around what it contains. */
export interface Sphere {
  contains(lng: number, lat: number): boolean;
  /** Latitudes (degrees) between which every contained point lies. */
  south: number;
  north: number;
  /** Every contained point lies within `lngGap` degrees of longitude `lng` (Infinity near a pole). */
  lng: number;
  lngGap: number;
}

// Widens the box a little more than the checks inside `contains` round.
const BOX_SLACK = 1e-6;

/**
 * `$geoWithin: {$centerSphere: [[lng, lat], radians]}` as a test of one point. Throws on any
 * other shape, as mingo does on an operator it cannot compile.
 */
export function withinSphere(value: unknown): Sphere {
  const sphere = (value as { $centerSphere?: [Point, number] } | null)?.$centerSphere;
  if (!Array.isArray(sphere) || !pointOf(sphere[0]) || typeof sphere[1] !== 'number') {
    throw new Error('$geoWithin supports only {$centerSphere: [[lng, lat], radians]}');
  }
  const [[lng, lat], radians] = sphere;
  const maxLngGap = longitudeGap(lat, radians);
  const latGap = (radians + MARGIN) / DEGREE + BOX_SLACK;
  return {
    contains: (pLng, pLat) => {
      if (Math.abs(pLat - lat) * DEGREE > radians + MARGIN) return false;
      const gap = Math.abs(pLng - lng) % 360;
      if (Math.min(gap, 360 - gap) * DEGREE > maxLngGap) return false;
      return angularDistance(lat, lng, pLat, pLng) <= radians;
    },
    south: lat - latGap,
    north: lat + latGap,
    lng,
    lngGap: maxLngGap / DEGREE + BOX_SLACK,
  };
}

/**
 * The leaf test of `$geoWithin: {$centerSphere: ...}`: a point (GeoJSON or an `[lng, lat]` pair)
 * within the circle, or an array holding at least one such point (MongoDB's reading of a field with
 * several locations).
 */
export function centerSphere(value: unknown): (leaf: unknown) => boolean {
  const within = withinSphere(value).contains;
  return (leaf) => {
    const point = pointOf(leaf);
    if (point) return within(point[0], point[1]);
    if (!Array.isArray(leaf)) return false;
    for (let i = 0; i < leaf.length; i++) {
      const p = pointOf(leaf[i]);
      if (p && within(p[0], p[1])) return true;
    }
    return false;
  };
}

/**
 * MongoDB's `$geoWithin: {$centerSphere: [[lng, lat], radians]}`, which mingo lacks: great-circle
 * distance by the haversine formula, radius in radians exactly as MongoDB takes it.
 */
function $geoWithin(selector: string, value: unknown): (obj: Record<string, unknown>) => boolean {
  return anyLeaf(selector.split('.'), centerSphere(value));
}

export const geoContext = Context.init().addQueryOps({ $geoWithin } as never);
