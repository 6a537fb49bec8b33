import { DEAL_TYPES, DealImport, FULFILLMENT_METHODS, demoDeals, demoRegions } from './demo-catalogue';

const NOW = new Date('2025-06-15T12:34:56.789Z');
const DAY_MS = 86_400_000;
const CARD_FIELDS = [
  'fixed_fee',
  'incentive_amount',
  'incentive_percentage',
  'max_linkage',
  'maximum_allowance',
  'min_spend',
  'num_qualifying',
  'offer_construct',
  'percent_fee',
] as const;
const MONEY_FIELDS = ['current_price', 'value', 'cost', 'fixed_fee', 'incentive_amount', 'maximum_allowance', 'min_spend'] as const;

function haversineMiles(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = (d: number) => (d * Math.PI) / 180;
  const a = Math.sin(rad(lat2 - lat1) / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(rad(lon2 - lon1) / 2) ** 2;
  return 2 * 3958.8 * Math.asin(Math.sqrt(a));
}

describe('demo catalogue', () => {
  const regions = demoRegions();
  const regionById = new Map(regions.map((r) => [r.id, r]));
  const deals = demoDeals(NOW);

  describe('regions', () => {
    it('has about 40 regions with unique ids and two inactive', () => {
      expect(regions.length).toBeGreaterThanOrEqual(35);
      expect(regionById.size).toBe(regions.length);
      expect(regions.filter((r) => !r.active)).toHaveLength(2);
    });

    it('uses valid IANA time zones, covering all US zones', () => {
      for (const r of regions) expect(() => new Intl.DateTimeFormat('en-US', { timeZone: r.time_zone })).not.toThrow();
      const zones = new Set(regions.map((r) => r.time_zone));
      for (const z of [
        'America/New_York',
        'America/Chicago',
        'America/Denver',
        'America/Phoenix',
        'America/Los_Angeles',
        'America/Anchorage',
        'Pacific/Honolulu',
      ])
        expect(zones).toContain(z);
    });

    it('has plausible coordinates and 5-digit postal codes', () => {
      for (const r of regions) {
        expect(r.latitude).toBeGreaterThan(18);
        expect(r.latitude).toBeLessThan(72);
        expect(r.longitude).toBeGreaterThan(-170);
        expect(r.longitude).toBeLessThan(-65);
        expect(r.postal_codes.length).toBeGreaterThanOrEqual(3);
        for (const z of r.postal_codes) expect(z).toMatch(/^\d{5}$/);
        expect(r.state).toMatch(/^[A-Z]{2}$/);
      }
    });
  });

  describe('deals', () => {
    it('is deterministic for a given now', () => {
      expect(demoDeals(new Date(NOW.getTime()))).toEqual(deals);
      expect(demoDeals(NOW, 25)).toEqual(deals.slice(0, 25));
    });

    it('produces the requested count with unique ids', () => {
      expect(deals).toHaveLength(300);
      expect(new Set(deals.map((d) => d.id)).size).toBe(deals.length);
      for (const d of deals) expect(d.image_url).toBe(`/images/deals/${d.id}.png`);
    });

    it('covers every type x fulfilment method combination', () => {
      for (const t of DEAL_TYPES)
        for (const m of FULFILLMENT_METHODS) expect(deals.some((d) => d.type === t && d.fulfillment_method === m)).toBe(true);
    });

    it('references existing regions and covers all of them', () => {
      for (const d of deals) expect(regionById.has(d.region_id)).toBe(true);
      expect(new Set(deals.map((d) => d.region_id)).size).toBe(regions.length);
    });

    it('places 1-3 locations within 25 miles of the region, in its postal codes', () => {
      for (const d of deals) {
        const r = regionById.get(d.region_id)!;
        expect(d.locations.length).toBeGreaterThanOrEqual(1);
        expect(d.locations.length).toBeLessThanOrEqual(3);
        for (const { address } of d.locations) {
          expect(haversineMiles(r.latitude, r.longitude, address.latitude!, address.longitude!)).toBeLessThan(25);
          expect(r.postal_codes).toContain(address.postal_code);
          expect(address.region).toBe(r.state);
          expect(address.country).toBe('US');
        }
      }
    });

    it('uses non-negative integer cents for money fields', () => {
      for (const d of deals)
        for (const f of MONEY_FIELDS) {
          const v = d[f];
          if (v === undefined) continue;
          expect(Number.isInteger(v)).toBe(true);
          expect(v).toBeGreaterThanOrEqual(0);
        }
    });

    it('prices priced deals between $5 and $300 with value 1.5-3x', () => {
      for (const d of deals.filter((x) => x.type === 'daily-deal' || x.type === 'on-going')) {
        expect(d.current_price).toBeGreaterThanOrEqual(499);
        expect(d.current_price).toBeLessThanOrEqual(30_000);
        expect(d.value / d.current_price).toBeGreaterThanOrEqual(1.45);
        expect(d.value / d.current_price).toBeLessThanOrEqual(3.05);
      }
      for (const d of deals.filter((x) => x.type === 'affiliate' || x.type === 'card-linked')) expect(d.current_price).toBe(0);
    });

    it('schedules deals sensibly relative to now', () => {
      const now = NOW.getTime();
      for (const d of deals) {
        const [start, end, expires] = [d.start_at, d.end_at, d.expires_at].map((s) => Date.parse(s));
        for (const s of [d.start_at, d.end_at, d.expires_at]) expect(s).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
        expect(end).toBeGreaterThan(start);
        expect(expires).toBeGreaterThan(end);
        if (d.type === 'on-going') expect(end - start).toBeGreaterThan(15 * DAY_MS);
        if (d.type === 'daily-deal') expect(end - start).toBeLessThanOrEqual(7 * DAY_MS);
        if (d.state === 'in-flight') {
          expect(start).toBeLessThan(now);
          expect(end).toBeGreaterThan(now);
        }
        if (d.state === 'approved') expect(start).toBeGreaterThan(now);
        if (d.state === 'landed') expect(end).toBeLessThan(now);
      }
    });

    it('has mostly in-flight deals and some in every other workflow state', () => {
      const inFlight = deals.filter((d) => d.state === 'in-flight').length;
      expect(inFlight / deals.length).toBeGreaterThan(0.8);
      for (const s of ['approved', 'landed', 'paused', 'submitted', 'in-review']) expect(deals.some((d) => d.state === s)).toBe(true);
    });

    it('keeps card-linked fields on card-linked deals only', () => {
      for (const d of deals) {
        if (d.type === 'card-linked') {
          for (const f of CARD_FIELDS.filter((f) => !f.startsWith('incentive_'))) expect(d[f]).toBeDefined();
          expect((d.incentive_amount === undefined) !== (d.incentive_percentage === undefined)).toBe(true);
          expect(d.quantity).toBe(d.max_linkage);
        } else {
          for (const f of CARD_FIELDS) expect(f in d).toBe(false);
        }
      }
    });

    it('has fine_print_legalese only on printed deals and shipping only on shipped deals', () => {
      for (const d of deals) {
        expect('fine_print_legalese' in d).toBe(d.fulfillment_method === 'printed');
        expect(d.shipping_address_required).toBe(d.fulfillment_method === 'shipped');
      }
    });

    it('includes some sold-out-at-start deals and deals with expiration_days', () => {
      expect(deals.some((d: DealImport) => d.quantity === 0)).toBe(true);
      expect(deals.some((d) => d.expiration_days !== undefined)).toBe(true);
      for (const d of deals) expect(d.affinity_score * 10).toBeCloseTo(Math.round(d.affinity_score * 10), 9);
    });
  });
});
