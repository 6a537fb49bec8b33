import { localDate, localHourInstant, nextDate } from './local-time';

describe('local time of a region', () => {
  it('finds the instant of a local hour, summer and winter', () => {
    expect(localHourInstant('2026-06-15', 7, 'America/Chicago').toISOString()).toBe('2026-06-15T12:00:00.000Z');
    expect(localHourInstant('2026-01-15', 7, 'America/Chicago').toISOString()).toBe('2026-01-15T13:00:00.000Z');
    expect(localHourInstant('2026-06-15', 7, 'Pacific/Honolulu').toISOString()).toBe('2026-06-15T17:00:00.000Z');
    expect(localHourInstant('2026-06-15', 7, 'Asia/Kolkata').toISOString()).toBe('2026-06-15T01:30:00.000Z');
    expect(localHourInstant('2026-06-15', 0, 'UTC').toISOString()).toBe('2026-06-15T00:00:00.000Z');
  });
  it('tells the local date, and the next', () => {
    expect(localDate(new Date('2026-06-15T03:00:00Z'), 'America/Chicago')).toBe('2026-06-14');
    expect(localDate(new Date('2026-06-15T03:00:00Z'), 'Asia/Tokyo')).toBe('2026-06-15');
    expect(nextDate('2026-12-31')).toBe('2027-01-01');
  });
});
