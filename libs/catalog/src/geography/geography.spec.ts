import { distanceMiles, EARTH_RADIUS_MILES } from '@deals/kernel';
import usCities from '@deals/runtime/demo/us-cities.json';
import { cityKey as projectionCityKey } from '../projections/regions/regions.projection';
import { Geography } from './geography';

interface DemoRegion {
  id: string;
  city: string;
  state: string;
  latitude: number;
  longitude: number;
}
const regions = usCities as DemoRegion[];

/**
 * Great-circle distance by the haversine formula, written out here independently of the kernel
 * (different grouping of terms, atan2 instead of asin) so the test does not check the code against itself.
 */
function haversineMiles(lat1: number, lng1: number, lat2: number, lng2: number, radius: number): number {
  const rad = Math.PI / 180;
  const a =
    Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return radius * 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a));
}
/** IUGG mean Earth radius, 6,371.0088 km, in miles: what published city-to-city figures use. */
const MEAN_RADIUS_MILES = 3958.76;

describe('Geography', () => {
  const geography = new Geography();

  beforeAll(() => geography.warmUp(), 30_000);

  describe('zipPoint', () => {
    // Expected points are published coordinates of a landmark inside each zip code (Wikipedia /
    // GeoHack pages of the buildings), not values read from the zip package. A zip's representative
    // point lies within a few kilometres of such a landmark for these small downtown zips, so the
    // tolerance is 0.05 degrees (about 3.5 miles of latitude).
    const landmarks: Array<[zip: string, landmark: string, latitude: number, longitude: number, city: string, state: string]> = [
      ['10007', 'New York City Hall', 40.7128, -74.006, 'New York', 'NY'],
      ['90012', 'Los Angeles City Hall', 34.0537, -118.2428, 'Los Angeles', 'CA'],
      ['20500', 'The White House', 38.8977, -77.0365, 'Washington', 'DC'],
      ['60602', 'Chicago City Hall', 41.8837, -87.6323, 'Chicago', 'IL'],
      ['94102', 'San Francisco City Hall', 37.7793, -122.4193, 'San Francisco', 'CA'],
      ['78701', 'Texas State Capitol', 30.2747, -97.7404, 'Austin', 'TX'],
      ['02133', 'Massachusetts State House', 42.3588, -71.0638, 'Boston', 'MA'],
      ['80203', 'Colorado State Capitol', 39.7392, -104.9849, 'Denver', 'CO'],
      ['98109', 'Space Needle', 47.6205, -122.3493, 'Seattle', 'WA'],
      ['96813', 'Hawaii State Capitol', 21.3073, -157.8574, 'Honolulu', 'HI'],
    ];

    it.each(landmarks)('%s (%s) is within 0.05 degrees of the landmark', (zip, _landmark, latitude, longitude, city, state) => {
      const point = geography.zipPoint(zip);
      expect(point).not.toBeNull();
      expect(Math.abs(point!.latitude - latitude)).toBeLessThan(0.05);
      expect(Math.abs(point!.longitude - longitude)).toBeLessThan(0.05);
      expect(point).toMatchObject({ city, state });
    });

    it('accepts surrounding spaces and ZIP+4, and keeps the leading zero', () => {
      expect(geography.zipPoint(' 02133 ')).toEqual(geography.zipPoint('02133'));
      expect(geography.zipPoint('20500-0003')).toEqual(geography.zipPoint('20500'));
    });

    it.each(['', ' ', '1234', '123456', 'abcde', '2013', '20500-', '20500-12', '20 500', '00000', '99999', '10007x'])(
      'gives null for %j',
      (zip) => {
        expect(geography.zipPoint(zip)).toBeNull();
      },
    );

    it('gives null for non-strings', () => {
      expect(geography.zipPoint(10007 as unknown as string)).toBeNull();
      expect(geography.zipPoint(undefined as unknown as string)).toBeNull();
    });

    it('returns a copy, so callers cannot corrupt the shared table', () => {
      const point = geography.zipPoint('10007')!;
      point.city = 'Gotham';
      expect(geography.zipPoint('10007')!.city).toBe('New York');
    });
  });

  describe('great-circle distances (the kernel distanceMiles, used by nearest)', () => {
    const nyc = { latitude: 40.7128, longitude: -74.006 };
    const la = { latitude: 34.0537, longitude: -118.2428 };

    it('New York City Hall to Los Angeles City Hall is about 2,445 miles', () => {
      const miles = distanceMiles(nyc.latitude, nyc.longitude, la.latitude, la.longitude);
      // Independent haversine with the kernel's radius: the same number to well under a foot.
      expect(miles).toBeCloseTo(haversineMiles(nyc.latitude, nyc.longitude, la.latitude, la.longitude, EARTH_RADIUS_MILES), 4);
      // Published figure: about 2,445 mi (3,936 km) great-circle between the two city halls, which is the
      // haversine at the mean Earth radius. The kernel uses 3,963.2 mi (MongoDB's figure, the equatorial
      // radius), so its distances run 0.11% long: 2,448 mi here. Within 0.2% of the published value.
      expect(haversineMiles(nyc.latitude, nyc.longitude, la.latitude, la.longitude, MEAN_RADIUS_MILES)).toBeCloseTo(2445.5, 0);
      expect(Math.abs(miles - 2445) / 2445).toBeLessThan(0.002);
    });

    it('matches values computable by hand', () => {
      // Same point: 0. A quarter of the equator: pi/2 * R. Antipodes: pi * R. One degree of latitude: R * pi / 180 (69.17 mi).
      expect(distanceMiles(40.7128, -74.006, 40.7128, -74.006)).toBe(0);
      expect(distanceMiles(0, 0, 0, 90)).toBeCloseTo((Math.PI / 2) * EARTH_RADIUS_MILES, 6);
      expect(distanceMiles(0, 0, 0, 180)).toBeCloseTo(Math.PI * EARTH_RADIUS_MILES, 6);
      expect(distanceMiles(10, 20, 11, 20)).toBeCloseTo((Math.PI / 180) * EARTH_RADIUS_MILES, 6);
      expect((Math.PI / 180) * EARTH_RADIUS_MILES).toBeCloseTo(69.17, 2);
    });

    it('agrees with the independent haversine between demo cities', () => {
      for (const [a, b] of [
        ['boston', 'miami'],
        ['seattle', 'san-diego'],
        ['anchorage', 'honolulu'],
        ['chicago', 'st-louis'],
      ]) {
        const from = regions.find((r) => r.id === a)!;
        const to = regions.find((r) => r.id === b)!;
        expect(distanceMiles(from.latitude, from.longitude, to.latitude, to.longitude)).toBeCloseTo(
          haversineMiles(from.latitude, from.longitude, to.latitude, to.longitude, EARTH_RADIUS_MILES),
          6,
        );
      }
    });
  });

  describe('nearest', () => {
    it.each([
      ['10007', 'new-york'],
      ['94103', 'san-francisco'],
      ['78701', 'austin'],
      ['63101', 'st-louis'],
      ['96813', 'honolulu'],
      ['99501', 'anchorage'],
      // Zips in towns that are not demo regions: the closest region wins.
      ['19801', 'philadelphia'], // Wilmington DE: ~27 mi to Philadelphia, ~100 mi to Washington
      ['95616', 'sacramento'], // Davis CA: ~14 mi to Sacramento, ~60 mi to San Francisco
      ['02138', 'boston'], // Cambridge MA
    ])('zip %s -> %s', (zip, regionId) => {
      const found = geography.nearest(geography.zipPoint(zip)!, regions);
      expect(found?.candidate.id).toBe(regionId);
      expect(found!.miles).toBeLessThan(40);
    });

    // University-owned address blocks (assigned to the campuses in the 1980s and 1990s) that DB-IP
    // places in the campus city; the nearest demo region is the metro the campus is in, with 60 miles to spare.
    it.each([
      ['128.95.1.1', 'seattle'], // University of Washington
      ['128.135.1.1', 'chicago'], // University of Chicago
      ['128.83.1.1', 'austin'], // University of Texas at Austin
      ['130.207.1.1', 'atlanta'], // Georgia Tech
      ['2607:4000::1', 'seattle'], // University of Washington, IPv6
    ])('ip %s -> %s', (ip, regionId) => {
      const found = geography.nearest(geography.ipPoint(ip)!, regions, 60);
      expect(found?.candidate.id).toBe(regionId);
    });

    it('respects maxMiles (inclusive) and returns null when nothing is close enough', () => {
      const missoula = geography.zipPoint('59801')!; // Missoula MT: no demo region within 150 miles
      expect(geography.nearest(missoula, regions, 150)).toBeNull();
      const found = geography.nearest(missoula, regions)!;
      expect(found.candidate.id).toBe('boise');
      expect(geography.nearest(missoula, regions, found.miles)?.candidate.id).toBe('boise');
    });

    it('handles empty lists, bad coordinates and ties', () => {
      const point = { latitude: 40, longitude: -75 };
      expect(geography.nearest(point, [])).toBeNull();
      expect(geography.nearest(point, [{ latitude: Number.NaN, longitude: 0 }])).toBeNull();
      expect(geography.nearest({ latitude: Number.NaN, longitude: 0 }, regions)).toBeNull();
      const twins = [
        { id: 'first', latitude: 41, longitude: -75 },
        { id: 'second', latitude: 39, longitude: -75 },
      ];
      expect(geography.nearest(point, twins)?.candidate.id).toBe('first');
      expect(geography.nearest(point, twins)?.miles).toBeCloseTo(distanceMiles(40, -75, 41, -75), 9);
    });
  });

  describe('ipPoint', () => {
    // IP geolocation is coarse and ranges get reassigned, so these assert only the country and the state,
    // for blocks whose owner and location have been stable for decades (university networks and a UK
    // ISP's block that MaxMind also uses in its own tests). Their DB-IP entries name the campus city.
    it.each([
      ['128.32.0.1', 'US', 'CA'], // UC Berkeley
      ['128.95.1.1', 'US', 'WA'], // University of Washington
      ['128.135.1.1', 'US', 'IL'], // University of Chicago
      ['128.83.1.1', 'US', 'TX'], // University of Texas at Austin
      ['130.207.1.1', 'US', 'GA'], // Georgia Tech
      ['141.211.1.1', 'US', 'MI'], // University of Michigan
      ['2607:f140::1', 'US', 'CA'], // UC Berkeley, IPv6
      ['2607:4000::1', 'US', 'WA'], // University of Washington, IPv6
      ['81.2.69.142', 'GB', 'England'], // Andrews & Arnold, UK: outside the US the region is a name
    ])('%s is in %s/%s', (ip, country, region) => {
      const point = geography.ipPoint(ip);
      expect(point).toMatchObject({ country, region });
      expect(Number.isFinite(point!.latitude) && Number.isFinite(point!.longitude)).toBe(true);
      expect(typeof point!.city).toBe('string');
      expect(point!.city).not.toMatch(/\(/); // DB-IP's "(neighbourhood)" suffix is removed
    });

    it('looks IPv4-mapped IPv6 and bracketed addresses up as the plain address', () => {
      const plain = geography.ipPoint('128.32.0.1');
      expect(geography.ipPoint('::ffff:128.32.0.1')).toEqual(plain);
      expect(geography.ipPoint('::FFFF:8020:0001')).toEqual(plain);
      expect(geography.ipPoint('0:0:0:0:0:ffff:128.32.0.1')).toEqual(plain);
      expect(geography.ipPoint(' [2607:f140::1] ')).toEqual(geography.ipPoint('2607:f140::1'));
    });

    it.each([
      '10.0.0.1',
      '10.255.255.254',
      '192.168.1.1',
      '172.16.5.4',
      '172.31.255.255',
      '127.0.0.1',
      '127.1.2.3',
      '169.254.10.10',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '192.0.2.1',
      '::1',
      '::',
      'fe80::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      '2001:db8::1',
    ])('gives null for the non-public address %s', (ip) => {
      expect(geography.ipPoint(ip)).toBeNull();
    });

    it.each([
      '',
      'localhost',
      'abc',
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '999.1.1.1',
      '01.2.3.4x',
      '::g',
      '1::2::3',
      '12345',
      'http://8.8.8.8',
    ])('gives null for the malformed address %j', (ip) => {
      expect(geography.ipPoint(ip)).toBeNull();
    });
  });

  describe('isIp and isZip', () => {
    it('classifies region parameters', () => {
      expect(['8.8.8.8', '10.0.0.1', '::1', '[2607:f140::1]', '::ffff:1.2.3.4'].every((t) => geography.isIp(t))).toBe(true);
      expect(['10007', 'new-york', 'New York,NY', '1.2.3', '', 'fe80::1%'].some((t) => geography.isIp(t))).toBe(false);
      expect(['10007', '02133', ' 20500 ', '20500-0003'].every((t) => geography.isZip(t))).toBe(true);
      expect(['1007', '100071', 'new-york', '8.8.8.8', '', '20500-03'].some((t) => geography.isZip(t))).toBe(false);
      expect(geography.isZip(null as unknown as string) || geography.isIp(null as unknown as string)).toBe(false);
    });
  });

  describe('cityKey', () => {
    it('is the regions projection key, after undoing percent-encoding (also double) and form-encoding', () => {
      expect(geography.cityKey('New York', 'NY')).toBe('new york,ny');
      expect(geography.cityKey('New%20York', 'NY')).toBe('new york,ny');
      expect(geography.cityKey('New%2520York', 'ny')).toBe('new york,ny');
      expect(geography.cityKey('  San   Francisco ', ' ca ')).toBe('san francisco,ca');
      expect(geography.cityKey('Salt+Lake+City', 'UT')).toBe('salt lake city,ut');
      expect(geography.cityKey('100%', 'TX')).toBe('100%,tx');
      for (const region of regions) expect(geography.cityKey(region.city, region.state)).toBe(projectionCityKey(region.city, region.state));
    });
  });

  describe('lazy loading', () => {
    it('reads no data file until an address needs it', () => {
      const missing = new Geography({ ipv4Database: '/nonexistent/ipv4.mmdb', ipv6Database: '/nonexistent/ipv6.mmdb' });
      expect(missing.ipPoint('10.0.0.1')).toBeNull(); // private: answered without the database
      expect(missing.ipPoint('not an ip')).toBeNull();
      expect(missing.isIp('8.8.8.8')).toBe(true);
      expect(() => missing.ipPoint('8.8.8.8')).toThrow(/ENOENT/); // a missing file is a deployment fault, not "unknown"
      expect(() => missing.warmUp()).toThrow(/ENOENT/);
    });
  });
});
