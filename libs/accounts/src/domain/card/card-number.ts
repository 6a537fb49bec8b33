import type { ValidationIssue } from '@deals/kernel';

/**
 * A card as a partner sends it (interface 4.10 and the full purchase's `credit_card`). Fields are
 * `unknown` because they arrive from JSON: `month` and `year` are integers in one call and strings
 * in the other. None of these values may be logged, stored or put into an event.
 */
export interface CardInput {
  number?: unknown;
  verification_value?: unknown;
  month?: unknown;
  year?: unknown;
  zip_code?: unknown;
}

/** The brands `cardBrand` recognises, all with 16-digit numbers and 3-digit security codes. */
export const CARD_BRANDS = ['Visa', 'MasterCard', 'Discover', 'JCB', 'UnionPay'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

const CARD_DIGITS = 16;
const ZIP = /^\d{5}(-\d{4})?$/;

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

/**
 * Checks a card as entered; returns one issue per problem (an empty array when the card is
 * acceptable). Only brands in {@link CARD_BRANDS} are accepted; none of them uses a 4-digit
 * security code, so the verification value must be exactly 3 digits. Messages never quote the
 * number or the verification value.
 */
export function validateCardInput(input: CardInput, now: Date): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const fail = (field: string, message: string, type: ValidationIssue['type'] = 'invalid') =>
    issues.push({ type, message, resource: 'credit_card', field });

  const number = text(input.number);
  if (number === undefined) fail('number', 'is required', 'missing_field');
  else if (number === null) fail('number', 'must be a string of digits');
  else {
    const digits = normaliseCardNumber(number);
    if (!/^\d+$/.test(digits)) fail('number', 'must contain only digits, spaces and dashes');
    else if (digits.length !== CARD_DIGITS) fail('number', `must be ${CARD_DIGITS} digits`);
    else {
      if (!passesLuhn(digits)) fail('number', 'fails the Luhn check');
      if (cardBrand(digits) === null) fail('number', `is not a supported card brand (${CARD_BRANDS.join(', ')})`);
    }
  }

  const cvv = text(input.verification_value);
  if (cvv === undefined) fail('verification_value', 'is required', 'missing_field');
  else if (cvv === null || !/^\d{3}$/.test(cvv)) fail('verification_value', 'must be 3 digits');

  const month = cardMonth(input.month);
  if (isAbsent(input.month)) fail('month', 'is required', 'missing_field');
  else if (month === null) fail('month', 'must be a month from 1 to 12');

  const year = cardYear(input.year);
  if (isAbsent(input.year)) fail('year', 'is required', 'missing_field');
  else if (year === null) fail('year', 'must be four digits');

  if (month !== null && year !== null && now.getTime() >= cardExpiresAt(month, year).getTime()) {
    fail('year', 'has expired');
  }

  const zip = text(input.zip_code);
  if (zip === undefined) fail('zip_code', 'is required', 'missing_field');
  else if (zip === null || !ZIP.test(zip)) fail('zip_code', 'must be a 5-digit US zip code or ZIP+4 (12345-6789)');

  return issues;
}

const isAbsent = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/** Trimmed text; a whole number is taken as its digits; undefined when absent, null for any other type. */
function text(value: unknown): string | undefined | null {
  if (isAbsent(value)) return undefined;
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return null;
}

function wholeNumber(value: unknown, shape: RegExp): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && shape.test(String(value)) ? value : null;
  if (typeof value === 'string' && shape.test(value.trim())) return Number(value.trim());
  return null;
}
