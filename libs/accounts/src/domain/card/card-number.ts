/**
 * A card's rules (POST /credit_cards and the full purchase's `credit_card`), as the request schema
 * (http/credit-card.request.ts) and the card writes apply them. No card number or verification
 * value may be logged, stored or put into an event.
 */

/** The brands `cardBrand` recognises, all with 16-digit numbers and 3-digit security codes. */
export const CARD_BRANDS = ['Visa', 'MasterCard', 'Discover', 'JCB', 'UnionPay'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

export const CARD_DIGITS = 16;
export const ZIP = /^\d{5}(-\d{4})?$/;

/** The number without the spaces and dashes people type between groups of digits. */
export const normaliseCardNumber = (raw: string): string => raw.replace(/[\s-]+/g, '');

/** `XXXX-XXXX-XXXX-1234`: the only form of a card number the service ever shows. */
export function maskedNumber(last4: string): string {
  // Refusing anything but four digits keeps a whole number from being "masked" by mistake.
  if (!/^\d{4}$/.test(last4)) throw new Error('maskedNumber takes the last four digits only');
  return `XXXX-XXXX-XXXX-${last4}`;
}

/** The Luhn (mod 10) check digit test. */
export function passesLuhn(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The brand of a 16-digit number by its leading digits, or null for any other number. */
export function cardBrand(number: string): CardBrand | null {
  const digits = normaliseCardNumber(number);
  if (!/^\d{16}$/.test(digits)) return null;
  const lead = (n: number) => Number(digits.slice(0, n));
  const within = (n: number, low: number, high: number) => lead(n) >= low && lead(n) <= high;
  if (digits[0] === '4') return 'Visa';
  if (within(2, 51, 55) || within(4, 2221, 2720)) return 'MasterCard';
  if (lead(4) === 6011 || within(3, 644, 649) || lead(2) === 65) return 'Discover';
  if (within(4, 3528, 3589)) return 'JCB';
  if (lead(2) === 62) return 'UnionPay';
  return null;
}

/** A month of 1–12 given as a number or as text such as `"07"`, or null. */
export function cardMonth(value: unknown): number | null {
  const n = wholeNumber(value, /^\d{1,2}$/);
  return n !== null && n >= 1 && n <= 12 ? n : null;
}

/** A four-digit year given as a number or as text, or null. */
export function cardYear(value: unknown): number | null {
  const n = wholeNumber(value, /^\d{4}$/);
  return n !== null && n >= 1000 ? n : null;
}

/** The first instant after the card's last valid day: cards run to the end of their month (UTC). */
export const cardExpiresAt = (month: number, year: number): Date => new Date(Date.UTC(year, month, 1));

/** Whether a card of this expiry month and year has expired at `now`. */
export const hasExpired = (month: number, year: number, now: Date): boolean => now.getTime() >= cardExpiresAt(month, year).getTime();

function wholeNumber(value: unknown, shape: RegExp): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && shape.test(String(value)) ? value : null;
  if (typeof value === 'string' && shape.test(value.trim())) return Number(value.trim());
  return null;
}

/**
 * A card number's issue in the mode it is given in: a sandbox takes only the published test cards
 * (a real card has no business there), and a live call takes none of them when `liveTakesTestCards`
 * is off. `number` is normalised.
 */
export function cardModeIssue(number: string, sandbox: boolean, liveTakesTestCards: boolean, testCards: readonly string[]): string | null {
  const test = testCards.includes(number);
  if (sandbox && !test) return 'is not a test card: test credentials take only the published test card numbers';
  if (!sandbox && test && !liveTakesTestCards) return 'is a test card: use test credentials (your sandbox) to buy with it';
  return null;
}
