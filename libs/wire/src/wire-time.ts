const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** `created_at` as the original service wrote it: `Fri Dec 16 19:11:15 UTC 2011`. */
export function humanUtc(instant: string | Date): string {
  const d = new Date(instant);
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}

/** ISO 8601 UTC without milliseconds: `2026-01-05T00:00:00Z`. */
export function isoUtc(instant: string | Date): string {
  return new Date(instant).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** ISO 8601 in a time zone, with its offset at that instant: `2026-03-31T23:59:00-04:00`. */
export function isoInZone(instant: string | Date, timeZone: string): string {
  let format = offsetFormatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    offsetFormatters.set(timeZone, format);
  }
  const d = new Date(instant);
  const parts = Object.fromEntries(format.formatToParts(d).map((p) => [p.type, p.value]));
  const local = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  const offsetMinutes = Math.round((local - Math.floor(d.getTime() / 1000) * 1000) / 60000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}
