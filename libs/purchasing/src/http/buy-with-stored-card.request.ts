import { currencyField, requestDto, requiredText } from '@deals/wire';
import { z } from 'zod';
import { DRY_RUN, type StoredCardOrder } from '../commands/buy-with-stored-card/buy-with-stored-card.command';
import { giftField, legacyDryRun, quantity, section, shippingAddress } from './full-purchase.request';

const PRICE = 'must be a whole number from 0';

/** The order of POST /purchases and its dry run: the deal, the units, the user and stored card, the price the caller expects. */
const storedCardOrder = z.object({
  deal_id: requiredText('the deal to buy').meta({ example: 'chicago-spa-day' }),
  quantity,
  user_id: requiredText('the buyer, a user of this partner').meta({ example: 'u4Kd8' }),
  credit_card_id: requiredText('a stored card of the user').meta({ example: 'c2Wm5' }),
  expected_price_per_unit: z
    .custom<number>((value) => value !== undefined, { error: PRICE, params: { issueType: 'missing_field' }, abort: false })
    .refine((value) => value === undefined || (Number.isSafeInteger(value) && value >= 0), PRICE)
    .meta({
      type: 'integer',
      minimum: 0,
      description: "the deal's current price in cents: a purchase at another is refused",
      example: 4900,
    }),
  session_id: z
    .string({ error: 'must be text' })
    .optional()
    .meta({ description: 'an affiliate session: links the purchase to the affiliate of the session', example: 's-1' }),
  shipping_address: shippingAddress.optional().meta(section('shipping_address', 'where to ship; required for a shipped deal')),
  currency: currencyField(),
  gift: giftField,
});

const toOrder = (body: z.output<typeof storedCardOrder>, dryRun: boolean): StoredCardOrder => ({
  dealId: body.deal_id,
  quantity: body.quantity,
  userId: body.user_id,
  creditCardId: body.credit_card_id,
  expectedPrice: body.expected_price_per_unit,
  sessionId: body.session_id ?? null,
  shipping: body.shipping_address ?? null,
  dryRun: dryRun ? DRY_RUN : null,
  gift: body.gift ?? null,
});

/** POST /purchases: the order; the deprecated `dry_run: true` still makes it a dry run. */
export const buyWithStoredCardBody = storedCardOrder
  .extend({ dry_run: legacyDryRun('POST /purchases/dry_run') })
  .transform((body) => toOrder(body, body.dry_run === true))
  .meta({ 'x-resource': 'purchase' });

export class BuyWithStoredCardBody extends requestDto(buyWithStoredCardBody) {}

/** POST /purchases/dry_run: the order, always a dry run; a field it does not describe (`dry_run` too) is refused, as on every call added beside the interface. */
export const dryRunStoredCardBody = z
  .strictObject(storedCardOrder.shape)
  .transform((body) => toOrder(body, true))
  .meta({ 'x-resource': 'purchase' });

export class DryRunStoredCardBody extends requestDto(dryRunStoredCardBody) {}
