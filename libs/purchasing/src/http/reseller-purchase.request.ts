import { isIsoDateText } from '@deals/kernel';
import { currencyField, requestDto } from '@deals/wire';
import { z } from 'zod';
import { MAX_UNITS_PER_PURCHASE } from '../domain/inventory/unit-counts';

/** The longest text field, the transaction reference included, in characters (code points). */
const MAX_TEXT = 255;
/** Control characters (C0, DEL, C1) and the bidirectional overrides and isolates that reorder what follows them. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/**
 * A text field of the sale: kept on it and shown on its coupons and in the audit, so at most 255
 * characters and no control characters. Absent is left out; which fields are required depends on
 * the deal's kind, which the handler knows.
 */
const saleText = (description: string, example?: string) =>
  z
    .string({ error: 'must be text' })
    .refine((text) => [...text].length <= MAX_TEXT, `must be at most ${MAX_TEXT} characters`)
    .refine((text) => !CONTROL.test(text), 'must not hold control characters')
    .optional()
    .meta({ description, ...(example ? { example } : {}) });

const twoLetters = (description: string, example: string) =>
  saleText(description, example).refine((text) => text === undefined || /^[A-Za-z]{2}$/.test(text), 'must be two letters');

const UNITS = `must be a whole number from 1 to ${MAX_UNITS_PER_PURCHASE}`;

/**
 * The reseller sale's body. Every field is optional here: the deal's kind decides which are required
 * (daily and on-going: the buyer's name and quantity; shipped: the address too; card-linked: the
 * transaction alone), and a repeat of a recorded transaction_reference answers the first sale
 * whatever else it holds.
 */
export const resellerSaleBody = z
  .object({
    deal_id: z
      .string({ error: 'must be a string' })
      .nullish()
      .transform((id) => id ?? undefined)
      // Described as the string it must be: null reads as left out, and is refused as such.
      .meta({ type: 'string', nullable: undefined, description: 'the deal sold', example: 'chicago-spa-day' }),
    quantity: z
      .unknown()
      .optional()
      .refine(
        (value) =>
          value === undefined || (Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_UNITS_PER_PURCHASE),
        UNITS,
      )
      .transform((value) => value as number | undefined)
      .meta({
        type: 'integer',
        minimum: 1,
        maximum: MAX_UNITS_PER_PURCHASE,
        description: 'units sold: required but for card-linked deals (1 when absent there)',
      }),
    transaction_amount: z
      .unknown()
      .optional()
      .refine(
        (value) => value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0),
        'must be whole cents, not negative',
      )
      .transform((value) => value as number | undefined)
      .meta({ type: 'integer', minimum: 0, description: 'what the buyer paid the reseller, cents', example: 4900 }),
    transaction_date: z
      .unknown()
      .optional()
      .refine((value) => value === undefined || isIsoDateText(value, 'optional'), 'must be an ISO 8601 date and time')
      .transform((value) => value as string | undefined)
      .meta({ type: 'string', description: 'ISO 8601 date and time of the sale', example: '2026-06-15T10:00:00Z' }),
    first_name: saleText("the buyer's first name (required but for card-linked deals)", 'Ann'),
    last_name: saleText("the buyer's last name (required but for card-linked deals)", 'Lee'),
    address_type: saleText('required for shipped deals: the kind of address', 'home'),
    address1: saleText('required for shipped deals', '1 Lake St'),
    address2: saleText('required for shipped deals', 'Apt 4'),
    postal_code: saleText('required for shipped deals', '60601'),
    city: saleText('required for shipped deals', 'Chicago'),
    state: twoLetters('required for shipped deals: two letters', 'IL'),
    country: twoLetters('required for shipped deals: two letters', 'US'),
    telephone: saleText('required for shipped deals', '+1 312 555 0100'),
    transaction_reference: saleText("the partner's own reference of the sale: a repeat answers the first sale", 'order-20260615-0042'),
    currency: currencyField(),
  })
  // What every deal's kind requires (the handler refuses each missing one with its own message).
  .meta({ 'x-resource': 'purchase', required: ['deal_id', 'transaction_reference', 'transaction_date', 'transaction_amount'] });

export class ResellerSaleBody extends requestDto(resellerSaleBody) {}
