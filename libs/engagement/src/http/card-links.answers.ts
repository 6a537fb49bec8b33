import { z } from 'zod';
import type { CardLinkDetails } from '../projections/card-link-details/card-link-details.projection';

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
