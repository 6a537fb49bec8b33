import { z } from 'zod';
import type { CardLinkDetails } from '../projections/card-link-details/card-link-details.projection';
import type { CardTransactionDetails } from '../projections/card-transactions/card-transactions.projection';

/** A card link as the API answers it. */
export const cardLinkSchema = z
  .object({
    id: z.string(),
    deal_id: z.string(),
    user_id: z.string(),
    merchant_id: z.string().nullable().meta({ description: "the deal's merchant, null when the deal names none" }),
    state: z.enum(['linked', 'unlinked', 'fulfilled']),
  })
  .meta({
    id: 'CardLink',
    description: "a user's link to a card-linked deal",
    example: { id: 'k7Qp2', deal_id: 'chicago-coffee-back', user_id: 'u4Kd8', merchant_id: 'bean-there', state: 'linked' },
  });

const exampleLink = (cardLinkSchema.meta() as { example: Record<string, unknown> }).example;

export const toCardLink = (view: CardLinkDetails) => ({
  id: view._id,
  deal_id: view.dealId,
  user_id: view.userId,
  merchant_id: view.merchantId,
  state: view.state,
});

export const CardLinkAnswer = z.object({ status: z.literal('success'), card_link: cardLinkSchema }).meta({
  example: { status: 'success', card_link: exampleLink },
});

/** POST /card_links: one link for `deal_id`, the links in the order given for `deal_ids`. */
export const LinkCardsAnswer = z
  .union([CardLinkAnswer, z.object({ status: z.literal('success'), card_links: z.array(cardLinkSchema) })])
  .meta({ example: { status: 'success', card_links: [exampleLink, { ...exampleLink, id: 'k7Qp3', deal_id: 'chicago-bagel-back' }] } });

export const CardLinkListAnswer = z
  .union([
    z.object({ status: z.literal('success'), card_links: z.array(cardLinkSchema) }),
    z.object({ status: z.literal('success'), count: z.number().int() }),
  ])
  .meta({ example: { status: 'success', card_links: [exampleLink] } });

export const RedeemAnswer = z.object({ status: z.literal('success') }).meta({ example: { status: 'success' } });

/** A card transaction as the API answers it: its phase, amounts and what it earned and gave back. */
export const cardTransactionSchema = z
  .object({
    id: z.string().meta({ description: 'the partner’s transaction reference' }),
    card_link_id: z.string(),
    deal_id: z.string(),
    user_id: z.string(),
    phase: z.enum(['authorised', 'cleared', 'refunded']).meta({ description: 'the latest phase reported' }),
    transaction_date: z.string().meta({ description: 'as the partner wrote it' }),
    merchant: z.string().nullable().meta({ description: 'where the card was used, as a report named it; null when none did' }),
    authorised_amount: z.number().int().nullable().meta({ description: 'cents; null when no authorisation was reported' }),
    cleared_amount: z.number().int().nullable().meta({ description: 'cents; null until cleared' }),
    refunded_amount: z.number().int().nullable().meta({ description: 'cents; null until refunded' }),
    max_redemption: z.boolean(),
    qualifies: z.boolean().meta({ description: 'counts towards the link’s `num_qualifying` now' }),
    incentive_cents: z.number().int().meta({ description: 'the user’s incentive credited on clearing' }),
    incentive_reversed_cents: z.number().int().meta({ description: 'of it, reversed by the refund' }),
    fee_cents: z.number().int().meta({ description: 'the partner’s fee charged on clearing' }),
    fee_reversed_cents: z.number().int().meta({ description: 'of it, reversed by the refund' }),
    authorised_at: z.string().nullable(),
    cleared_at: z.string().nullable(),
    refunded_at: z.string().nullable(),
  })
  .meta({
    id: 'CardTransaction',
    description: "one of a card link's transactions, in phases",
    example: {
      id: 'txn-20260615-0093',
      card_link_id: 'k7Qp2',
      deal_id: 'chicago-coffee-back',
      user_id: 'u4Kd8',
      phase: 'cleared',
      transaction_date: '2026-06-15T09:30:00-05:00',
      merchant: 'Blue Door Coffee, 12 Main St',
      authorised_amount: 2450,
      cleared_amount: 2450,
      refunded_amount: null,
      max_redemption: false,
      qualifies: true,
      incentive_cents: 500,
      incentive_reversed_cents: 0,
      fee_cents: 270,
      fee_reversed_cents: 0,
      authorised_at: '2026-06-15T14:30:05.000Z',
      cleared_at: '2026-06-17T03:00:00.000Z',
      refunded_at: null,
    },
  });

const exampleTransaction = (cardTransactionSchema.meta() as { example: Record<string, unknown> }).example;

export const toCardTransaction = (view: CardTransactionDetails) => ({
  id: view.reference,
  card_link_id: view.cardLinkId,
  deal_id: view.dealId,
  user_id: view.userId,
  phase: view.phase,
  transaction_date: view.transactionDate,
  merchant: view.merchant ?? null,
  authorised_amount: view.authorisedAmount,
  cleared_amount: view.clearedAmount,
  refunded_amount: view.refundedAmount,
  max_redemption: view.maxRedemption,
  qualifies: view.qualifies,
  incentive_cents: view.incentiveCents,
  incentive_reversed_cents: view.incentiveReversedCents,
  fee_cents: view.feeCents,
  fee_reversed_cents: view.feeReversedCents,
  authorised_at: view.authorisedAt,
  cleared_at: view.clearedAt,
  refunded_at: view.refundedAt,
});

export const CardTransactionAnswer = z
  .object({ status: z.literal('success'), card_transaction: cardTransactionSchema })
  .meta({ example: { status: 'success', card_transaction: exampleTransaction } });

export const CardTransactionListAnswer = z
  .union([
    z.object({ status: z.literal('success'), card_transactions: z.array(cardTransactionSchema) }),
    z.object({ status: z.literal('success'), count: z.number().int() }),
  ])
  .meta({ example: { status: 'success', card_transactions: [exampleTransaction] } });
