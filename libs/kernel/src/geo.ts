/** Mean Earth radius in miles, as MongoDB's `$centerSphere` examples use it. */
export const EARTH_RADIUS_MILES = 3963.2;

const toRadians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle angle in radians between two points (haversine formula). */
export function angularDistance(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = toRadians(lat2 - lat1);
  const dLng = toRadians(lng2 - lng1);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(lat1)) * Math.cos(toRadians(lat2)) * Math.sin(dLng / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function distanceMiles(lat1: number, lng1: number, lat2: number, lng2: number): number {
  return angularDistance(lat1, lng1, lat2, lng2) * EARTH_RADIUS_MILES;
}

/** A GeoJSON point, longitude first, or null when the coordinates are missing or out of range. */
export function geoPoint(latitude: unknown, longitude: unknown): { type: 'Point'; coordinates: [number, number] } | null {
  if (typeof latitude !== 'number' || typeof longitude !== 'number') return null;
  if (!Number.isFinite(latitude) || !Number.isFinite(longitude)) return null;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  return { type: 'Point', coordinates: [longitude, latitude] };
}
