import { unknownWords, xmlDateTimeInstant } from '@deals/kernel';
import { currencyField, flag, requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';
import type { CardTransaction, CardTransactionPhaseReport } from '../commands/card-link.commands';
import { CARD_TRANSACTION_PHASES } from '../domain/card-link/card-link.decider';
import { CARD_LINK_STATES, CardLinkState } from '../queries/card-link.queries';

/** Ids and references are at most this long: anything longer names nothing the service made. */
export const MAX_ID = 128;
/** Deals one POST /card_links may link at once. */
export const MAX_DEALS_PER_CALL = 100;

const fail = (ctx: z.RefinementCtx, message: string, path: string[] = []) => {
  ctx.addIssue({ code: 'custom', message, path });
  return z.NEVER;
};

const idText = (description: string, example: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : 'must be a string') })
    .min(1, 'is required')
    .max(MAX_ID, `must be at most ${MAX_ID} characters`)
    .meta({ description, example });

/** `deal_ids` as a comma-separated string or an array of strings. */
const dealIdList = z
  .union([z.string(), z.array(z.string())], { error: 'must be a comma-separated string or an array of strings' })
  .optional()
  .meta({ description: 'deals to link: a comma-separated string, or an array (`deal_ids[]` in the query)', example: 'deal-a,deal-b' });

interface LinkRequest {
  userId: string | undefined;
  dealIds: string[];
  /** The field that named the deals, for the refusals. */
  field: 'deal_id' | 'deal_ids';
}

/**
 * A query's `deal_ids[]` read as `deal_ids`, so that the description names the list once. Given
 * both, their deals are joined; a value of neither form is kept for the refusal.
 */
function dealIdsOnce(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || !('deal_ids[]' in input)) return input;
  const { 'deal_ids[]': bracketed, ...rest } = input as Record<string, unknown>;
  if (rest.deal_ids === undefined) return { ...rest, deal_ids: bracketed };
  const listed = [rest.deal_ids, bracketed];
  const invalid = listed.find((v) => typeof v !== 'string' && !Array.isArray(v));
  if (invalid !== undefined) return { ...rest, deal_ids: invalid };
  return { ...rest, deal_ids: listed.flatMap((v) => (typeof v === 'string' ? v.split(',') : (v as unknown[]))) };
}

/**
 * POST /card_links: `user_id` and either `deal_id` or `deal_ids`, in the JSON body or
 * the query. With partner credentials `user_id` is required; a user's access token links its own user.
 */
export const linkCardsParams = z.preprocess(
  dealIdsOnce,
  z
    .object({
      user_id: idText('the user (a user’s access token links its own user)', 'u4Kd8').optional(),
      deal_id: idText('one card-linked deal', 'chicago-coffee-back').optional(),
      deal_ids: dealIdList,
    })
    .meta({ 'x-resource': 'card_link' })
    .transform((value, ctx): LinkRequest => {
      if (value.deal_id !== undefined && value.deal_ids !== undefined) return fail(ctx, 'give deal_id or deal_ids, not both', ['deal_ids']);
      if (value.deal_id !== undefined) return { userId: value.user_id, dealIds: [value.deal_id], field: 'deal_id' };
      if (value.deal_ids === undefined) return fail(ctx, 'is required (or deal_ids)', ['deal_id']);
      const dealIds = (typeof value.deal_ids === 'string' ? value.deal_ids.split(',') : value.deal_ids)
        .map((id) => id.trim())
        .filter((id) => id !== '');
      if (!dealIds.length) return fail(ctx, 'names no deal', ['deal_ids']);
      if (dealIds.length > MAX_DEALS_PER_CALL) return fail(ctx, `names more than ${MAX_DEALS_PER_CALL} deals`, ['deal_ids']);
      const long = dealIds.find((id) => id.length > MAX_ID);
      if (long) return fail(ctx, `has an id longer than ${MAX_ID} characters`, ['deal_ids']);
      const twice = dealIds.find((id, i) => dealIds.indexOf(id) !== i);
      if (twice) return fail(ctx, 'names a deal twice', ['deal_ids']);
      return { userId: value.user_id, dealIds, field: 'deal_ids' };
    }),
);
export class LinkCardsParams extends requestDto(linkCardsParams) {}

export const cardLinkParams = z.object({ card_link_id: idText('the card link', 'k7Qp2') }).meta({ 'x-resource': 'card_link' });
export class CardLinkParams extends requestDto(cardLinkParams) {}

/** The largest transaction amount taken, cents (ten billion dollars): percentages of it stay exact integers. */
export const MAX_TRANSACTION_CENTS = 1_000_000_000_000;
const AMOUNT = `must be a whole number of cents from 1 to ${MAX_TRANSACTION_CENTS}`;
const DATE = 'must be an XML dateTime: YYYY-MM-DDThh:mm:ss with an optional zone offset';

/** The amount and date every report of a transaction carries. */
const transactionFields = {
  transaction_amount: z
    .union([z.number(), z.string()], { error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : AMOUNT) })
    .transform((value, ctx) => {
      const n = typeof value === 'number' ? value : /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
      return Number.isSafeInteger(n) && n >= 1 && n <= MAX_TRANSACTION_CENTS ? n : fail(ctx, AMOUNT);
    })
    .meta({
      anyOf: [
        { type: 'integer', minimum: 1, maximum: MAX_TRANSACTION_CENTS },
        { type: 'string', pattern: '^\\s*\\d+\\s*$' },
      ],
      description: 'the transaction’s amount, cents: a whole number, or its digits',
      example: 2450,
    }),
  transaction_date: z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : DATE) })
    .transform((text, ctx) => {
      const at = text.length <= 64 ? xmlDateTimeInstant(text) : null;
      return at ? { text, at } : fail(ctx, DATE);
    })
    .meta({ description: 'when the transaction was made; no offset is UTC', example: '2026-06-15T09:30:00-05:00' }),
};

/** A partner's reference of a transaction: 1 to 255 characters. */
const transactionReference = (description: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : 'must be a string') })
    .min(1, 'is required')
    .max(255, 'must be at most 255 characters')
    .meta({ description, example: 'txn-20260615-0093' });

/** Where the card was used: a name and address as the card network gives it, shown back on the transaction. */
const merchant = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((text) => !/[\p{Cc}\p{Cf}]/u.test(text), 'must not hold control or format characters')
  .optional()
  .meta({ description: 'where the card was used, as the card network names it', example: 'Blue Door Coffee, 12 Main St' });

/** What a report of a transaction says of it, beside its reference. */
const reported = (value: {
  transaction_amount: number;
  transaction_date: { text: string; at: Date };
  max_redemption?: unknown;
  merchant?: string;
}) => ({
  amountCents: value.transaction_amount,
  date: value.transaction_date.text,
  at: value.transaction_date.at,
  maxRedemption: value.max_redemption === true,
  ...(value.merchant === undefined ? {} : { merchant: value.merchant }),
});

/** PUT /card_links/:id/redeem: one of the user's card transactions. */
export const redeemCardLinkBody = z
  .object({
    ...transactionFields,
    transaction_reference: transactionReference('the partner’s reference of the transaction: recorded once per card link'),
    max_redemption: flag('must be true or false', 'true: this redemption fulfils the link'),
    currency: currencyField(),
  })
  .meta({ 'x-resource': 'card_link' })
  .transform((value): CardTransaction => ({ reference: value.transaction_reference, ...reported(value) }));
export class RedeemCardLinkBody extends requestDto(redeemCardLinkBody) {}

/** PUT /card_links/:card_link_id/transactions/:transaction_reference: the link, and the partner's reference of the transaction. */
export const cardTransactionParams = z
  .object({
    card_link_id: idText('the card link', 'k7Qp2'),
    transaction_reference: transactionReference('the partner’s reference of the transaction (URL-encoded)'),
  })
  .meta({ 'x-resource': 'card_transaction' });
export class CardTransactionParams extends requestDto(cardTransactionParams) {}

/** PUT /card_links/:card_link_id/transactions/:transaction_reference. */
export const cardTransactionBody = z
  .strictObject({
    phase: z
      .enum(CARD_TRANSACTION_PHASES, {
        error: (issue) => (issue.input === undefined ? 'is required' : `must be one of ${CARD_TRANSACTION_PHASES.join(', ')}`),
      })
      .meta({ description: 'what the card network reports: authorised, cleared, or refunded', example: 'cleared' }),
    ...transactionFields,
    max_redemption: flag('must be true or false', 'with `cleared`: true, this transaction fulfils the link'),
    merchant,
    currency: currencyField(),
  })
  .meta({ 'x-resource': 'card_transaction' })
  .transform((value): CardTransactionPhaseReport => ({ phase: value.phase, ...reported(value) }));
export class CardTransactionBody extends requestDto(cardTransactionBody) {}

/**
 * POST /v1/test_helpers/card_transactions: a transaction a sandbox's card link sees, as the card
 * network would report it; the reference and the date may be left to the service.
 */
export const testCardTransactionBody = z
  .strictObject({
    card_link_id: idText('the sandbox’s card link', 'k7Qp2'),
    phase: z
      .enum(CARD_TRANSACTION_PHASES, {
        error: (issue) => (issue.input === undefined ? 'is required' : `must be one of ${CARD_TRANSACTION_PHASES.join(', ')}`),
      })
      .meta({ description: 'authorised, cleared, or refunded', example: 'cleared' }),
    transaction_amount: transactionFields.transaction_amount,
    transaction_date: transactionFields.transaction_date
      .optional()
      .meta({ description: 'when the transaction was made; none: now', example: '2026-06-15T09:30:00Z' }),
    transaction_reference: transactionReference('the transaction’s reference; none: a new one (`test_…`), answered as `id`').optional(),
    max_redemption: flag('must be true or false', 'with `cleared`: true, this transaction fulfils the link'),
    merchant,
    currency: currencyField(),
  })
  .meta({ 'x-resource': 'card_transaction' });
export class TestCardTransactionBody extends requestDto(testCardTransactionBody) {}

/** GET /card_links/:card_link_id/transactions: `count`, `per_page`, `page`. */
export const cardTransactionListQuery = withPaging({}, 'card_transaction');
export class CardTransactionListQuery extends requestDto(cardTransactionListQuery) {}

/** GET /users/:user_id/card_links: the state words and `count`, `per_page`, `page`. */
export const cardLinkListQuery = withPaging(
  {
    filter: z
      .string({ error: `takes words from ${CARD_LINK_STATES.join(', ')}` })
      .optional()
      .transform((text, ctx): CardLinkState[] => {
        const words = text ? text.split(',').map((w) => w.trim()) : [];
        const unknown = words.filter((w) => !CARD_LINK_STATES.includes(w as CardLinkState));
        if (unknown.length) return fail(ctx, `takes words from ${CARD_LINK_STATES.join(', ')}; it has ${unknownWords(unknown)}`);
        return words as CardLinkState[];
      })
      .meta({ description: `comma-separated states from ${CARD_LINK_STATES.join(', ')}; none: every link`, example: 'linked,unlinked' }),
  },
  'card_link',
);
export class CardLinkListQuery extends requestDto(cardLinkListQuery) {}
