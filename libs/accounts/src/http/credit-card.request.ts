import type { CardDetails } from '@deals/kernel';
import { requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';
import { CARD_BRANDS, CARD_DIGITS, cardBrand, cardMonth, cardYear, normaliseCardNumber, passesLuhn, ZIP } from '../domain/card/card-number';

/**
 * A card as entered (POST /credit_cards, the full purchase's credit_card object): the same
 * rules and messages in both calls. Each field is text or a whole number (month and year are
 * integers in one call, strings in the other); absent, null or blank is "is required". Messages
 * never quote the number or the verification value. Whether the card has expired is the clock's
 * question: the card writes ask it.
 */

const REQUIRED = 'is required';
const absent = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/** A card field: text (trimmed) or a number, `invalid` when it is anything else; `read` takes it or names its problem. */
function cardField<T>(invalid: string, read: (value: string | number, ctx: z.RefinementCtx) => T) {
  return z.union([z.string(), z.number()], { error: (issue) => (absent(issue.input) ? REQUIRED : invalid) }).transform((value, ctx) => {
    if (absent(value)) {
      ctx.addIssue({ code: 'custom', message: REQUIRED });
      return z.NEVER;
    }
    return read(value, ctx);
  });
}

/** A field's text: trimmed, or a whole number not below 0 as its digits; null for any other number. */
const text = (value: string | number): string | null =>
  typeof value === 'string' ? value.trim() : Number.isSafeInteger(value) && value >= 0 ? String(value) : null;

function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER as never;
}

const NUMBER_TEXT = 'must be a string of digits';
const CVV = 'must be 3 digits';
const MONTH = 'must be a month from 1 to 12';
const YEAR = 'must be four digits';
const ZIP_CODE = 'must be a 5-digit US zip code or ZIP+4 (12345-6789)';

/** A stored card's fields. */
const cardShape = {
  number: cardField(NUMBER_TEXT, (value, ctx) => {
    const number = text(value);
    if (number === null) return fail(ctx, NUMBER_TEXT);
    const digits = normaliseCardNumber(number);
    if (!/^\d+$/.test(digits)) return fail(ctx, 'must contain only digits, spaces and dashes');
    if (digits.length !== CARD_DIGITS) return fail(ctx, `must be ${CARD_DIGITS} digits`);
    const luhn = passesLuhn(digits);
    const brand = cardBrand(digits) !== null;
    if (!luhn) ctx.addIssue({ code: 'custom', message: 'fails the Luhn check' });
    if (!brand) ctx.addIssue({ code: 'custom', message: `is not a supported card brand (${CARD_BRANDS.join(', ')})` });
    return luhn && brand ? digits : z.NEVER;
  }).meta({ description: `${CARD_DIGITS} digits (spaces and dashes allowed); ${CARD_BRANDS.join(', ')}`, example: '4242 4242 4242 4242' }),
  verification_value: cardField(CVV, (value, ctx) => {
    const cvv = text(value);
    return cvv !== null && /^\d{3}$/.test(cvv) ? cvv : fail(ctx, CVV);
  }).meta({ description: 'the 3-digit security code; used once, never kept', example: '123' }),
  month: cardField(MONTH, (value, ctx) => cardMonth(value) ?? fail(ctx, MONTH)).meta({
    description: 'expiry month, 1 to 12, as a number or text ("07")',
    example: 12,
  }),
  year: cardField(YEAR, (value, ctx) => cardYear(value) ?? fail(ctx, YEAR)).meta({
    description: 'expiry year, four digits, as a number or text',
    example: 2030,
  }),
  zip_code: cardField(ZIP_CODE, (value, ctx) => {
    const zip = text(value);
    return zip !== null && ZIP.test(zip) ? zip : fail(ctx, ZIP_CODE);
  }).meta({ description: 'billing zip code: 12345 or 12345-6789', example: '60601' }),
};

type CardFields = z.output<z.ZodObject<typeof cardShape>>;
const toCard = ({ number, verification_value, month, year, zip_code }: CardFields): CardDetails => ({
  number,
  cvv: verification_value,
  month,
  year,
  zip: zip_code,
});

/**
 * A card as entered, as `CardDetails` (the number as its digits): the full purchase's credit_card object.
 * `notAnObject`: the message for a card that is not an object.
 */
export const cardObject = (notAnObject: string) => z.object(cardShape, { error: notAnObject }).transform(toCard);

/** A card as entered, on its own. */
export const cardFields = cardObject('must be an object').meta({ 'x-resource': 'credit_card' });

/**
 * The user a card call names: with partner credentials, required (checked once the caller is known);
 * a user's access token acts for its own user, which the field may then only repeat.
 */
const userIdField = z
  .string({ error: REQUIRED })
  .optional()
  .meta({ description: "the card holder; a user's access token may leave it out (it acts for its user)", example: 'u4Kd8' });

/** POST /credit_cards body: the holder and the card. */
export const storeCardBody = z
  .object({ user_id: userIdField, ...cardShape })
  .transform(({ user_id, ...card }) => ({ userId: user_id, card: toCard(card) }))
  .meta({ 'x-resource': 'credit_card' });

const REPEATED = 'is given more than once, with different values';

/** GET /credit_cards parameters: the holder and `count`, `per_page`, `page`. */
export const cardListQuery = withPaging(
  {
    user_id: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .transform((value, ctx) => {
        if (!Array.isArray(value)) return value;
        // A parameter repeated with one value is that value.
        if (new Set(value).size === 1) return value[0];
        ctx.addIssue({ code: 'custom', message: REPEATED });
        return z.NEVER;
      })
      .meta({
        'x-resource': 'request',
        description: "the card holder (required with partner credentials); a user's access token lists its own user's cards",
        example: 'u4Kd8',
      }),
  },
  'credit_card',
);

export const cardParams = z
  .object({ credit_card_id: z.string().meta({ description: 'the card', example: 'c2Wm5' }) })
  .meta({ 'x-resource': 'credit_card' });

export class StoreCardBody extends requestDto(storeCardBody) {}
export class CardListQuery extends requestDto(cardListQuery) {}
export class CardParams extends requestDto(cardParams) {}
