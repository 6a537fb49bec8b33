import { cardObject, emailField, purchaseUserFields } from '@deals/accounts';
import { isoInstant } from '@deals/kernel';
import { currencyField, RequestMeta, requestDto, requiredText } from '@deals/wire';
import { z } from 'zod';
import { GIFT_DELIVERY_MAX_DAYS, type GiftOrder } from '../commands/buy-with-stored-card/buy-with-stored-card.command';
import type { FullPurchaseOrder } from '../commands/full-purchase/full-purchase.command';
import type { ShippingAddress } from '../domain/purchase/shipping-address';
import { MAX_UNITS_PER_PURCHASE } from '../domain/inventory/unit-counts';

/**
 * The full purchase's body: the deal and quantity, a user section (user_id or a user object), a card
 * section (credit_card_id or a credit_card object) and a shipping section. The user and card objects
 * are checked by the schemas of POST /users and POST /credit_cards (@deals/accounts), with their
 * messages; each section's entries name its resource and the field within it (`email`, not
 * `user.email`). What needs the deal or the clock (shipping required for a shipped deal, a known
 * shipping address, a card not expired) is the handler's.
 */

/** A section of the body: its entries name `resource` and their field within it. */
export const section = (resource: string, description: string): RequestMeta => ({ 'x-resource': resource, 'x-section': true, description });

const UNITS = `must be a whole number from 1 to ${MAX_UNITS_PER_PURCHASE}`;

/** A whole number of units: absent (or null) is `missing_field`, anything else outside 1 to the limit `invalid`, both told so. */
export const quantity = z
  .custom<number>((value) => value !== undefined && value !== null, {
    error: UNITS,
    params: { issueType: 'missing_field' },
    // Not aborting (z.custom's default): the body's own checks run whatever its fields hold.
    abort: false,
  })
  // An absent quantity is told once, above.
  .refine(
    (value) => value === undefined || value === null || (Number.isSafeInteger(value) && value >= 1 && value <= MAX_UNITS_PER_PURCHASE),
    UNITS,
  )
  .meta({ type: 'integer', minimum: 1, maximum: MAX_UNITS_PER_PURCHASE, description: 'units to buy', example: 2 });

/**
 * The deprecated `dry_run` of a purchase call: true answers the dry run of `operation` (what the
 * purchase would be, or the refusal it would get, making nothing), as that operation does. Read by
 * the idempotency hook too (`TakesDryRuns`), which claims no key for a dry run.
 */
export const legacyDryRun = (operation: string) =>
  z
    .boolean({ error: 'must be true or false' })
    .optional()
    .meta({
      deprecated: true,
      description:
        `Deprecated: call ${operation} instead, which takes this body without dry_run. true still answers that dry run here ` +
        '(docs/api.md, "Dry runs of a purchase", says until when). Default false',
      example: false,
    });

/** The id of a record the caller has, instead of the section's object; null is absent. */
const recordId = (resource: string, description: string, example: string) =>
  z.string({ error: 'must be a string' }).nullish().meta({ 'x-resource': resource, description, example });

const ADDRESS_TEXT = 'must be text of at most 200 characters';
const addressText = (example: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : ADDRESS_TEXT) })
    .transform((value, ctx) => {
      if (value === '' || value.length > 200) {
        ctx.addIssue({ code: 'custom', message: value === '' ? 'is required' : ADDRESS_TEXT });
        return z.NEVER;
      }
      return value.trim();
    })
    .meta({ description: 'text, at most 200 characters', example });

/** Two letters, upper-cased (a blank value is taken blank, as before). */
const twoLetters = (example: string) =>
  addressText(example)
    .transform((value, ctx) => {
      if (value !== '' && !/^[A-Za-z]{2}$/.test(value)) {
        ctx.addIssue({ code: 'custom', message: 'must be two letters' });
        return z.NEVER;
      }
      return value.toUpperCase();
    })
    .meta({ description: 'two letters', example });

/** The full purchase's shipping_address object. */
export const shippingAddress = z.object(
  {
    name: addressText('Fay Lee'),
    address_one: addressText('1 Lake St'),
    address_two: z
      .string({ error: ADDRESS_TEXT })
      .nullish()
      .transform((value, ctx) => {
        if (value === undefined || value === null || value === '') return null;
        if (value.length > 200) {
          ctx.addIssue({ code: 'custom', message: ADDRESS_TEXT });
          return z.NEVER;
        }
        return value.trim();
      })
      .meta({ description: 'optional: text, at most 200 characters', example: 'Apt 4' }),
    postal_code: addressText('60601'),
    city: addressText('Chicago'),
    state: twoLetters('IL'),
    country: twoLetters('US'),
  },
  { error: 'must be an object' },
);

const GIFT_NAME = 'must be text of 1 to 100 characters';
const GIFT_MESSAGE = 'must be text of at most 500 characters';
const GIFT_DELIVERY = 'must be an RFC 3339 date and time with a zone (2026-06-20T09:00:00Z)';
/** Characters counted in Unicode code points (a surrogate pair is one). */
const characters = (text: string) => [...text].length;

/**
 * A purchase's `gift` object: bought for someone else, named by email (the partner's user with
 * that address, compared as users' emails are, or a user made with it), who holds the coupons and
 * is mailed them with the message, at `deliver_at` or once bought. The clock's rules on
 * `deliver_at` (in the future, at most 90 days on, before the coupons expire) are the handler's.
 */
export const giftField = z
  // A field it does not describe is refused, not dropped: a misspelt `message` must not vanish.
  .strictObject(
    {
      email: emailField().meta({
        description: "the recipient's address: a user of this partner with it holds the gift, else one is made",
        example: 'ann@example.com',
      }),
      name: z
        .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : GIFT_NAME) })
        .trim()
        .refine((text) => text !== '' && characters(text) <= 100, GIFT_NAME)
        .meta({ description: 'how the mail greets the recipient, 1 to 100 characters', example: 'Ann' }),
      message: z
        .string({ error: GIFT_MESSAGE })
        .nullish()
        .refine((text) => text === undefined || text === null || characters(text) <= 500, GIFT_MESSAGE)
        .transform((text) => (text === undefined || text === null || text.trim() === '' ? null : text))
        .meta({ description: 'optional: a message the mail carries, at most 500 characters', example: 'Happy birthday!' }),
      deliver_at: z
        .string({ error: GIFT_DELIVERY })
        .nullish()
        .transform((text, ctx) => {
          if (text === undefined || text === null) return null;
          const at = text.length <= 40 ? isoInstant(text) : null;
          if (at) return at;
          ctx.addIssue({ code: 'custom', message: GIFT_DELIVERY });
          return z.NEVER;
        })
        .meta({
          type: 'string',
          format: 'date-time',
          description: `optional: when the recipient is mailed the gift, in the future, at most ${GIFT_DELIVERY_MAX_DAYS} days ahead (a test clock's time under one) and before its coupons expire; absent: once bought`,
          example: '2026-06-20T09:00:00Z',
        }),
    },
    { error: 'must be an object' },
  )
  .transform((gift): GiftOrder => ({ email: gift.email, name: gift.name, message: gift.message, deliverAt: gift.deliver_at }))
  .nullish()
  .meta({
    'x-resource': 'gift',
    description:
      "optional: buy for someone else: the recipient (found or made by email) holds the coupons and is mailed them; the buyer's card pays and a refund goes back to it",
  });

const USER_CHOICE = 'give user_id or a user object';
const CARD_CHOICE = 'give credit_card_id or a credit_card object';

/** The full purchase's order: the fields of the purchase and of its dry run. */
const orderShape = {
  deal_id: requiredText('the deal to buy').meta({ example: 'chicago-spa-day' }),
  quantity,
  user_id: recordId('user', 'a user of this partner (instead of a user object)', 'u4Kd8'),
  user: purchaseUserFields(USER_CHOICE)
    .nullish()
    .meta(section('user', 'the buyer, made unless its email names a user of this partner (then that user is the buyer)')),
  credit_card_id: recordId('credit_card', 'a stored card of the user (instead of a credit_card object)', 'c2Wm5'),
  credit_card: cardObject(CARD_CHOICE)
    .nullish()
    .meta(section('credit_card', 'the card, stored for the user (the same card stored before is reused)')),
  shipping_address_id: recordId(
    'shipping_address',
    'an address given in an earlier purchase (instead of a shipping_address object)',
    'mbx1-k2',
  ),
  shipping_address: shippingAddress.optional().meta(section('shipping_address', 'where to ship; required only for a shipped deal')),
  session_id: z
    .string({ error: 'must be text' })
    .nullish()
    .meta({ description: 'an affiliate session: links the purchase to the affiliate of the session', example: 's-1' }),
  currency: currencyField(),
  gift: giftField,
};

/** Where each field's entries come in the answer: the body's order, section by section. */
const ORDER = [...Object.keys(orderShape), 'dry_run'];

/** What the full purchase's bodies hold once parsed: the order's fields, and the deprecated `dry_run` where taken. */
type OrderFields = z.output<z.ZodObject<typeof orderShape>> & { dry_run?: boolean };

/** The full purchase's body of `object`: each section's id or object checked, then the order, a dry run when `isDryRun` says so. */
const fullPurchaseSchema = (object: z.ZodType<OrderFields>, isDryRun: (body: OrderFields) => boolean) =>
  object
    .superRefine(
      (body, ctx) => {
        // Each section needs its id or its object, whatever else the body holds.
        const absent = (value: unknown) => value === undefined || value === null;
        if (absent(body.user_id) && absent(body.user))
          ctx.addIssue({ code: 'custom', path: ['user'], message: USER_CHOICE, params: { issueType: 'missing_field' } });
        if (absent(body.credit_card_id) && absent(body.credit_card))
          ctx.addIssue({ code: 'custom', path: ['credit_card'], message: CARD_CHOICE, params: { issueType: 'missing_field' } });
        const rank = (issue: { path?: PropertyKey[] }) => ORDER.indexOf(String(issue.path?.[0]));
        ctx.issues.sort((a, b) => rank(a) - rank(b));
      },
      { when: () => true },
    )
    .transform((body): FullPurchaseOrder => ({
      dealId: body.deal_id,
      quantity: body.quantity,
      buyer: typeof body.user_id === 'string' ? { userId: body.user_id } : { user: body.user! },
      card: typeof body.credit_card_id === 'string' ? { creditCardId: body.credit_card_id } : { card: body.credit_card! },
      shipping:
        typeof body.shipping_address_id === 'string'
          ? { addressId: body.shipping_address_id }
          : body.shipping_address
            ? { address: body.shipping_address satisfies Omit<ShippingAddress, 'id'> }
            : null,
      sessionId: body.session_id ?? null,
      gift: body.gift ?? null,
      dryRun: isDryRun(body),
    }))
    .meta({ 'x-resource': 'purchase' });

/** POST /v1/purchases/full.json: the order; the deprecated `dry_run: true` still makes it a dry run. */
export const fullPurchaseBody = fullPurchaseSchema(
  z.object({ ...orderShape, dry_run: legacyDryRun('POST /v1/purchases/full/dry_run.json') }),
  (body) => body.dry_run === true,
);

export class FullPurchaseBody extends requestDto(fullPurchaseBody) {}

/** POST /v1/purchases/full/dry_run.json: the order, always a dry run; a field it does not describe (`dry_run` too) is refused. */
export const dryRunFullPurchaseBody = fullPurchaseSchema(z.strictObject(orderShape), () => true);

export class DryRunFullPurchaseBody extends requestDto(dryRunFullPurchaseBody) {}
