import { csvField } from '@deals/kernel';
import { createHash } from 'node:crypto';

/** A day closes this long after it ends (UTC): commands take their time when decided and are appended within seconds. */
export const CLOSE_AFTER_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The UTC day (YYYY-MM-DD) of an instant. */
export const dayOf = (instant: string): string => instant.slice(0, 10);

/** When `day` closes: an hour after its end. */
export const closesAt = (day: string): Date => new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS + CLOSE_AFTER_MS);

/** The days from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** What a line item moved, in cents, each figure never negative. */
export interface LineFigures {
  grossCents: number;
  refundCents: number;
  incentiveCents: number;
  incentiveReversedCents: number;
  feeCents: number;
  feeReversedCents: number;
}

export const LINE_KINDS = ['sale', 'refund', 'card_transaction_cleared', 'card_transaction_refunded'] as const;
export type LineKind = (typeof LINE_KINDS)[number];
/** How a sale was made: charged by the service (card), a claimed reservation, a reseller's sale. */
export type SaleChannel = 'card' | 'reservation' | 'reseller';

/** One line of a day's statement: the event that booked it, and what it moved. */
export interface SettlementLineItem extends LineFigures {
  lineId: string;
  kind: LineKind;
  /** The purchase, the refund, or the card transaction (`<card link>/<transaction reference>`). */
  reference: string;
  /** Sales only. */
  channel: SaleChannel | null;
  /** The instant it happened, and the log position of the event that booked it. */
  at: string;
  position: string;
}

export interface SettlementTotals extends LineFigures {
  /** Gross sales less refunds, incentives and fees, plus what was reversed of the last two. */
  netCents: number;
  lineItems: number;
}

export const ZERO_FIGURES: LineFigures = {
  grossCents: 0,
  refundCents: 0,
  incentiveCents: 0,
  incentiveReversedCents: 0,
  feeCents: 0,
  feeReversedCents: 0,
};

export const netOf = (f: LineFigures): number =>
  f.grossCents - f.refundCents - f.incentiveCents + f.incentiveReversedCents - f.feeCents + f.feeReversedCents;

/** The day's figures as a statement shows them, each signed as it counts towards the net. */
export const signedFigures = (t: SettlementTotals): Array<[string, number]> => [
  ['Gross sales', t.grossCents],
  ['Refunds', -t.refundCents],
  ['Incentives credited', -t.incentiveCents],
  ['Incentives reversed', t.incentiveReversedCents],
  ['Fees', -t.feeCents],
  ['Fees reversed', t.feeReversedCents],
  ['Net', t.netCents],
];

/** The day's figures: each the sum of its line items' (integers: nothing is rounded). */
export function totalsOf(lines: readonly LineFigures[]): SettlementTotals {
  const sum = { ...ZERO_FIGURES };
  for (const line of lines) for (const key of Object.keys(sum) as Array<keyof LineFigures>) sum[key] += line[key];
  return { ...sum, netCents: netOf(sum), lineItems: lines.length };
}

export const CSV_HEADER = [
  'position',
  'line_id',
  'kind',
  'reference',
  'channel',
  'at',
  'gross_cents',
  'refund_cents',
  'incentive_cents',
  'incentive_reversed_cents',
  'fee_cents',
  'fee_reversed_cents',
];

/** The day's line items as CSV, in log order, LF line ends: the form the digest is taken of. */
export function statementCsv(lines: readonly SettlementLineItem[]): string {
  const rows = lines.map((l) =>
    [
      l.position,
      l.lineId,
      l.kind,
      l.reference,
      l.channel,
      l.at,
      l.grossCents,
      l.refundCents,
      l.incentiveCents,
      l.incentiveReversedCents,
      l.feeCents,
      l.feeReversedCents,
    ]
      .map(csvField)
      .join(','),
  );
  return [CSV_HEADER.join(','), ...rows].map((row) => `${row}\n`).join('');
}

/** The statement's digest: SHA-256 (hex) of its CSV, which an auditor rebuilds from the events. */
export const digestOf = (lines: readonly SettlementLineItem[]): string => createHash('sha256').update(statementCsv(lines)).digest('hex');
