/** Whether `YYYY-MM-DD` names a day the calendar has (2026-02-30 does not; JavaScript would read it as 2 March). */
export function isCalendarDay(ymd: string): boolean {
  const [year, month, day] = ymd.split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;
const ISO_OFFSET_OPTIONAL = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Whether `text` is written as an ISO 8601 date, or date and time (seconds and fraction optional),
 * that `Date.parse` reads. `offset: 'required'` refuses a time without `Z` or ±hh:mm (it would be
 * read as the server's local time).
 */
export function isIsoDateText(text: unknown, offset: 'required' | 'optional'): text is string {
  return (
    typeof text === 'string' &&
    (offset === 'required' ? ISO_WITH_OFFSET : ISO_OFFSET_OPTIONAL).test(text) &&
    isCalendarDay(text.slice(0, 10)) &&
    !Number.isNaN(Date.parse(text))
  );
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * The instant `text` names, when it is one: an ISO 8601 date and time with `Z` or ±hh:mm, on a day
 * the calendar has; else null. A bare date, a time without offset, or whatever else `Date` would
 * guess at (`1`, `Nov 23 2026`) is not an instant: a history cut there would pass a guess off as
 * that moment's.
 */
export function isoInstant(text: unknown): Date | null {
  if (typeof text !== 'string' || !ISO_INSTANT.test(text) || !isCalendarDay(text.slice(0, 10))) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? null : at;
}

const XML_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|([+-])(\d{2}):(\d{2}))?$/;

/**
 * The instant an XML Schema dateTime names (`YYYY-MM-DDThh:mm:ss`, an optional fraction, an
 * optional `Z` or ±hh:mm offset up to 14:00), on a day the calendar has; else null. Without an
 * offset it is read as UTC (the service's zone), never as the server's local time.
 */
export function xmlDateTimeInstant(text: unknown): Date | null {
  if (typeof text !== 'string') return null;
  const m = XML_DATE_TIME.exec(text);
  if (!m || !isCalendarDay(`${m[1]}-${m[2]}-${m[3]}`)) return null;
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[9]) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (om > 59 || oh * 60 + om > 14 * 60) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const millis = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  // Date.UTC reads years 0 to 99 as 1900 to 1999: the year is set on its own.
  const at = new Date(Date.UTC(2000, 0, 1, hour, minute, second, millis));
  at.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  at.setTime(at.getTime() - offsetMinutes * 60_000);
  return Number.isNaN(at.getTime()) ? null : at;
}

/**
 * How long the time an XML Schema dateTime names lasts from its instant, at the precision it was
 * written in: a second without a fraction, a tenth with one digit, and so on down to a millisecond.
 * Null for a text that is not one.
 */
export function xmlDateTimeSpanMs(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = XML_DATE_TIME.exec(text);
  if (!m) return null;
  const digits = m[7] ? m[7].length - 1 : 0;
  return Math.max(1, 1000 / 10 ** digits);
}

const zoneFormatters = new Map<string, Intl.DateTimeFormat>();

/** The wall clock in a time zone at `at` (two-digit texts, as Intl writes them) and the zone's offset then, in minutes ahead of UTC. */
export function zonedParts(
  at: Date,
  timeZone: string,
): { year: string; month: string; day: string; hour: string; minute: string; second: string; offsetMinutes: number } {
  let format = zoneFormatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    zoneFormatters.set(timeZone, format);
  }
  const p = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, part.value]));
  const local = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  const offsetMinutes = Math.round((local - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
  return { year: p.year, month: p.month, day: p.day, hour: p.hour, minute: p.minute, second: p.second, offsetMinutes };
}
