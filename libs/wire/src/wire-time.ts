import { zonedParts } from '@deals/kernel';
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** `created_at` as the original service wrote it: `Fri Dec 16 19:11:15 UTC 2011`. */
export function humanUtc(instant: string | Date): string {
  const d = new Date(instant);
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}

/** Remembers the answers of a pure formatter for the instants deals carry (bounded). */
function memo<A extends unknown[]>(format: (...args: A) => string, capacity = 100_000): (...args: A) => string {
  const known = new Map<string, string>();
  return (...args: A) => {
    const key = args.map(String).join('|');
    let answer = known.get(key);
    if (answer === undefined) {
      if (known.size >= capacity) known.clear();
      known.set(key, (answer = format(...args)));
    }
    return answer;
  };
}

/** ISO 8601 UTC without milliseconds: `2026-01-05T00:00:00Z`. */
export const isoUtc = memo((instant: string | Date): string => new Date(instant).toISOString().replace(/\.\d{3}Z$/, 'Z'));

/** ISO 8601 in a time zone, with its offset at that instant: `2026-03-31T23:59:00-04:00`. */
export const isoInZone = memo(formatInZone);

function formatInZone(instant: string | Date, timeZone: string): string {
  const { offsetMinutes, ...parts } = zonedParts(new Date(instant), timeZone);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}
