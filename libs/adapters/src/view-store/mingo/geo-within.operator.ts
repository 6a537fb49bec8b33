import { angularDistance } from '@deals/kernel';
import { Context } from 'mingo';

type Point = [number, number];

function valueAt(obj: unknown, path: string): unknown {
  let value = obj;
  for (const part of path.split('.')) value = (value as Record<string, unknown> | null | undefined)?.[part];
  return value;
}

function pointOf(value: unknown): Point | null {
  if (Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === 'number')) return value as Point;
  const coordinates = (value as { type?: string; coordinates?: unknown } | null)?.coordinates;
  if ((value as { type?: string })?.type === 'Point' && Array.isArray(coordinates)) return pointOf(coordinates);
  return null;
}

/**
 * MongoDB's `$geoWithin: {$centerSphere: [[lng, lat], radians]}`, which mingo lacks: great-circle
 * distance by the haversine formula, radius in radians exactly as MongoDB takes it.
 */
function $geoWithin(selector: string, value: unknown): (obj: Record<string, unknown>) => boolean {
  const sphere = (value as { $centerSphere?: [Point, number] })?.$centerSphere;
  if (!sphere || !pointOf(sphere[0]) || typeof sphere[1] !== 'number') {
    throw new Error('$geoWithin supports only {$centerSphere: [[lng, lat], radians]}');
  }
  const [[lng, lat], radians] = sphere;
  return (obj) => {
    const point = pointOf(valueAt(obj, selector));
    return point !== null && angularDistance(lat, lng, point[1], point[0]) <= radians;
  };
}

export const geoContext = Context.init().addQueryOps({ $geoWithin } as never);
