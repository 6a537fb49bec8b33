import type { CatalogLinks } from '@deals/catalog';
import { isoUtc } from '@deals/wire';
import { z } from 'zod';
import type { PurchasePreview } from '../commands/buy-with-stored-card/buy-with-stored-card.command';
import { EXAMPLE_PURCHASE_DEAL, purchaseDealSchema, toPurchaseDeal } from './purchase.answers';

/** A dry run's answer: what the purchase would be, and what its checks counted. */
export function toDryRun(preview: PurchasePreview, catalog: CatalogLinks) {
  const { deal, card, limit } = preview;
  return {
    status: 'success' as const,
    dry_run: true as const,
    purchase: {
      deal_type: deal.type,
      deal_id: deal.dealId,
      price: deal.unitPrice,
      amount: preview.amountCents,
      number_bought: preview.quantity,
      user_id: preview.userId,
      credit_card_id: card.creditCardId,
      deal: toPurchaseDeal(deal, catalog),
    },
    card: {
      credit_card_id: card.creditCardId,
      number: `XXXX-XXXX-XXXX-${card.last4}`,
      type: card.brand,
      month: card.month,
      year: card.year,
    },
    limit: {
      max_per_user: limit.maxPerUser,
      units_bought: limit.bought,
      units_held: limit.holding,
      units_allowed: limit.maxPerUser === null ? null : Math.max(0, limit.maxPerUser - limit.bought - limit.holding),
    },
    availability: {
      start_at: isoUtc(preview.window.startAt),
      end_at: isoUtc(preview.window.endAt),
      expires_at: preview.window.expiresAt === null ? null : isoUtc(preview.window.expiresAt),
      num_left: preview.unitsLeft,
    },
  };
}

const cents = (description: string) => z.number().int().meta({ description });

/** The answer of a dry run, as {@link toDryRun} writes it. */
export const DryRunAnswer = z
  .object({
    status: z.literal('success'),
    dry_run: z.literal(true).meta({ description: 'a dry run: nothing was made, held, charged or kept' }),
    purchase: z
      .object({
        deal_type: z.string().meta({ example: 'daily-deal' }),
        deal_id: z.string(),
        price: cents('unit price the purchase would charge, cents'),
        amount: cents('total it would charge, cents (price × number_bought)'),
        number_bought: z.number().int(),
        user_id: z.string().nullable().meta({ description: 'the buyer; null when the full purchase would make the user' }),
        credit_card_id: z.string().nullable().meta({ description: 'the card; null when the full purchase would store the card' }),
        deal: purchaseDealSchema,
      })
      .meta({ id: 'DryRunPurchase', description: 'the purchase as it would be made now, without its id, states and coupons' }),
    card: z
      .object({
        credit_card_id: z.string().nullable(),
        number: z.string().meta({ description: 'masked', example: 'XXXX-XXXX-XXXX-4242' }),
        type: z.string().meta({ description: 'the card brand', example: 'Visa' }),
        month: z.number().int().meta({ description: 'expiry month' }),
        year: z.number().int().meta({ description: 'expiry year' }),
      })
      .meta({ description: 'the card that would be charged' }),
    limit: z
      .object({
        max_per_user: z.number().int().nullable().meta({ description: "the deal's per-user limit; null when it has none" }),
        units_bought: z.number().int().meta({ description: 'units of the deal the user has bought' }),
        units_held: z.number().int().meta({ description: "units held for the user's purchases still being charged" }),
        units_allowed: z
          .number()
          .int()
          .nullable()
          .meta({ description: 'units the user may still buy before this purchase; null without a limit' }),
      })
      .meta({ description: "what the deal's per-user limit counts of the user" }),
    availability: z
      .object({
        start_at: z.string().meta({ description: 'UTC, ISO 8601' }),
        end_at: z.string().meta({ description: 'UTC, ISO 8601' }),
        expires_at: z.string().nullable().meta({ description: 'voucher expiry, UTC, ISO 8601; null when none' }),
        num_left: z.number().int().meta({ description: 'units left before this purchase (a sandbox counts its own)' }),
      })
      .meta({ description: "the deal's window and stock" }),
  })
  .meta({
    id: 'DryRunAnswer',
    description: "a purchase's dry run: what the purchase would be; nothing was made, held, charged or kept",
    example: {
      status: 'success',
      dry_run: true,
      purchase: {
        deal_type: 'daily-deal',
        deal_id: 'chicago-spa-day',
        price: 4900,
        amount: 9800,
        number_bought: 2,
        user_id: 'u4Kd8',
        credit_card_id: 'c2Wm5',
        deal: EXAMPLE_PURCHASE_DEAL,
      },
      card: { credit_card_id: 'c2Wm5', number: 'XXXX-XXXX-XXXX-4242', type: 'Visa', month: 12, year: 2030 },
      limit: { max_per_user: 4, units_bought: 1, units_held: 0, units_allowed: 3 },
      availability: { start_at: '2026-06-01T00:00:00Z', end_at: '2026-06-30T00:00:00Z', expires_at: null, num_left: 42 },
    },
  });
