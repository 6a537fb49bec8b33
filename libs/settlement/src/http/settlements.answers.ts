import { z } from 'zod';
import { LINE_KINDS, SettlementLineItem } from '../domain/settlement-day';
import type { SettlementStatement } from '../queries/settlement.queries';

const cents = (description: string) =>
  z
    .number()
    .int()
    .meta({ description: `${description}, cents` });

export const settlementSchema = z
  .object({
    date: z.string().meta({ description: 'the UTC day' }),
    livemode: z.boolean().meta({ description: "false: the sandbox's statement (test credentials), apart from the live one" }),
    state: z.enum(['open', 'closed']).meta({ description: 'closed an hour after the day ends; a closed statement never changes' }),
    closes_at: z.string().meta({ description: 'when it closes (closed: when it did), ISO 8601 UTC' }),
    gross_sales_cents: cents('sales booked that day: card charges, claimed reservations, resellers’ sales'),
    refunds_cents: cents('refunds that succeeded that day'),
    incentives_credited_cents: cents('card-link incentives credited (transactions cleared or redeemed)'),
    incentives_reversed_cents: cents('card-link incentives taken back by refunded transactions'),
    fees_cents: cents('the deals’ fixed and percent fees on card-link transactions'),
    fees_reversed_cents: cents('fees taken back by refunded transactions'),
    net_cents: cents('gross sales − refunds − incentives credited + reversed − fees + reversed'),
    line_item_count: z.number().int(),
    digest: z
      .string()
      .nullable()
      .meta({ description: 'closed: SHA-256 (hex) of the day’s line items CSV, which an auditor rebuilds from the events; open: null' }),
  })
  .meta({ id: 'Settlement', description: "a partner's statement of one UTC day" });

export const lineItemSchema = z
  .object({
    line_id: z.string(),
    kind: z.enum(LINE_KINDS),
    reference: z.string().meta({ description: 'the purchase, the refund, or `<card link id>/<transaction reference>`' }),
    channel: z
      .string()
      .nullable()
      .meta({ description: 'sales only: how it was paid, `card`, `reservation` or `reseller`; null for the rest' }),
    at: z.string().meta({ description: 'when it happened, ISO 8601 UTC' }),
    position: z.string().meta({ description: 'the log position of the event that booked it' }),
    gross_cents: z.number().int(),
    refund_cents: z.number().int(),
    incentive_cents: z.number().int(),
    incentive_reversed_cents: z.number().int(),
    fee_cents: z.number().int(),
    fee_reversed_cents: z.number().int(),
  })
  .meta({ id: 'SettlementLineItem', description: 'one line of a statement: what one event moved' });

const exampleSettlement = {
  date: '2026-06-15',
  livemode: true,
  state: 'closed',
  closes_at: '2026-06-16T01:00:00.000Z',
  gross_sales_cents: 9800,
  refunds_cents: 4900,
  incentives_credited_cents: 500,
  incentives_reversed_cents: 0,
  fees_cents: 270,
  fees_reversed_cents: 0,
  net_cents: 4130,
  line_item_count: 3,
  digest: '9f2c…',
};
const exampleLine = {
  line_id: 'sale:P7P72Z9DDJ3Ix1zDc4n',
  kind: 'sale',
  reference: 'P7P72Z9DDJ3Ix1zDc4n',
  channel: 'card',
  at: '2026-06-15T14:02:11.000Z',
  position: '00000000000000001234',
  gross_cents: 9800,
  refund_cents: 0,
  incentive_cents: 0,
  incentive_reversed_cents: 0,
  fee_cents: 0,
  fee_reversed_cents: 0,
};

export const SettlementAnswer = z
  .object({ status: z.literal('success'), settlement: settlementSchema, line_items: z.array(lineItemSchema) })
  .meta({ example: { status: 'success', settlement: exampleSettlement, line_items: [exampleLine] } });

export const SettlementListAnswer = z
  .object({ status: z.literal('success'), settlements: z.array(settlementSchema) })
  .meta({ example: { status: 'success', settlements: [exampleSettlement] } });

export const toSettlement = (s: SettlementStatement, livemode: boolean) => ({
  date: s.day,
  livemode,
  state: s.state,
  closes_at: s.closesAt,
  gross_sales_cents: s.totals.grossCents,
  refunds_cents: s.totals.refundCents,
  incentives_credited_cents: s.totals.incentiveCents,
  incentives_reversed_cents: s.totals.incentiveReversedCents,
  fees_cents: s.totals.feeCents,
  fees_reversed_cents: s.totals.feeReversedCents,
  net_cents: s.totals.netCents,
  line_item_count: s.totals.lineItems,
  digest: s.digest,
});

export const toLineItem = (l: SettlementLineItem) => ({
  line_id: l.lineId,
  kind: l.kind,
  reference: l.reference,
  channel: l.channel,
  at: l.at,
  position: l.position,
  gross_cents: l.grossCents,
  refund_cents: l.refundCents,
  incentive_cents: l.incentiveCents,
  incentive_reversed_cents: l.incentiveReversedCents,
  fee_cents: l.feeCents,
  fee_reversed_cents: l.feeReversedCents,
});
