import { zonedParts } from '@deals/kernel';

/** The calendar date (`YYYY-MM-DD`) at `at` in a time zone. */
export function localDate(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

const offsetMinutes = (at: Date, timeZone: string) => zonedParts(at, timeZone).offsetMinutes;

/**
 * The instant of `hour`:00 on a local date in a time zone (the offset is taken at that instant, so
 * summer time is right; an hour skipped by the change of clocks is read with the offset before it).
 */
export function localHourInstant(date: string, hour: number, timeZone: string): Date {
  const [y, m, d] = date.split('-').map(Number);
  const guess = Date.UTC(y, m - 1, d, hour);
  let at = guess - offsetMinutes(new Date(guess), timeZone) * 60_000;
  at = guess - offsetMinutes(new Date(at), timeZone) * 60_000;
  return new Date(at);
}

/** The next local date after `date`. */
export const nextDate = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
