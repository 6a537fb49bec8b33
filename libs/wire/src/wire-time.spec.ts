import { humanUtc, isoInZone, isoUtc } from './wire-time';

describe('wire time formats', () => {
  it('writes created_at as the original service did', () => {
    expect(humanUtc('2011-12-16T19:11:15.000Z')).toBe('Fri Dec 16 19:11:15 UTC 2011');
    expect(humanUtc('2026-03-01T04:05:06Z')).toBe('Sun Mar 01 04:05:06 UTC 2026');
  });
  it('writes UTC instants without milliseconds', () => expect(isoUtc('2026-01-05T00:00:00.000Z')).toBe('2026-01-05T00:00:00Z'));
  it('writes an instant in a region time zone with the offset of that date', () => {
    expect(isoInZone('2026-01-15T17:00:00Z', 'America/New_York')).toBe('2026-01-15T12:00:00-05:00');
    expect(isoInZone('2026-07-15T17:00:00Z', 'America/New_York')).toBe('2026-07-15T13:00:00-04:00');
    expect(isoInZone('2026-07-15T17:00:00Z', 'America/Phoenix')).toBe('2026-07-15T10:00:00-07:00');
    expect(isoInZone('2026-01-01T04:59:59Z', 'America/Chicago')).toBe('2025-12-31T22:59:59-06:00');
    expect(isoInZone('2026-07-15T17:00:00Z', 'Pacific/Honolulu')).toBe('2026-07-15T07:00:00-10:00');
  });
});
