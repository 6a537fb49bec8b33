import { defineProjection, RecordedEvent, ViewDocument } from '@deals/kernel';
import { dayOf, LineFigures, LineKind, SaleChannel, ZERO_FIGURES } from '../../domain/settlement-day';

/**
 * "Which line items make partner P's statement of day D, and may a line dated D still come?" A line
 * is booked, on the UTC day it happened, by the event that moved the money: a purchase paid, claimed
 * or resold (its partner the one every purchase command records in the event's metadata), a refund
 * succeeded (made pending, with its partner and amount, by the refund asked), a card transaction
 * cleared or refunded. Only booked lines are read. A line still to come is `blocking` on its
 * `pendingDay`: a reserved purchase whose card is being charged (from its charge's start until its
 * sale, or its non-payment, is recorded), a refund asked and not yet settled. Such a line may be
 * dated on that day however late it is written (a call under a test clock keeps the clock's time of
 * its start), so the day does not close before it is.
 */
export interface SettlementLine extends ViewDocument, LineFigures {
  partnerId: string;
  booked: boolean;
  kind: LineKind;
  reference: string;
  channel: SaleChannel | null;
  /** Set once booked: the day, the instant, and the log position of the booking event. */
  day: string | null;
  at: string | null;
  position: string | null;
  /** A refund's amount, known when it is asked and booked when it succeeds. */
  pendingCents: number;
  /** A sale's purchase was reserved (a charge without a reservation never sells). */
  reserved?: boolean;
  /** A sale's card is being charged: from the charge's start until its sale or non-payment is recorded. */
  charging?: boolean;
  /** Whether a line dated `pendingDay` may still be booked by it. */
  blocking?: boolean;
  pendingDay?: string | null;
}

export const SETTLEMENT_LINES = 'settlement_lines_v2';

type Data = Record<string, unknown> & { partnerId?: string };

/** Each kind of sale: the field of its time, and its channel. */
const SALES: Record<string, [string, SaleChannel]> = {
  PurchasePaid: ['paidAt', 'card'],
  PurchaseClaimed: ['claimedAt', 'reservation'],
  PurchaseResold: ['resoldAt', 'reseller'],
};

/** The documents an event touches: none for card transactions that move no money. */
function lineIds(event: RecordedEvent): string[] {
  const d = event.data as Data;
  switch (event.type) {
    case 'PurchasePaid':
    case 'PurchaseClaimed':
    case 'PurchaseResold':
    case 'PurchaseReserved':
    case 'PurchaseNotPaid':
    case 'PurchaseReleased':
    case 'ChargeBegun':
    case 'ChargeEnded':
      return [`sale:${d.purchaseId as string}`];
    case 'RefundRequested':
    case 'RefundSucceeded':
    case 'RefundFailed':
      return [`refund:${d.refundId as string}`];
    case 'CardLinkRedeemed':
    case 'CardTransactionCleared':
      return (d.incentiveCents as number) + (d.feeCents as number) > 0
        ? [`ct:${d.cardLinkId as string}/${d.transactionReference as string}:cleared`]
        : [];
    case 'CardTransactionRefunded':
      return (d.incentiveReversedCents as number) + (d.feeReversedCents as number) > 0
        ? [`ct:${d.cardLinkId as string}/${d.transactionReference as string}:refunded`]
        : [];
  }
  return [];
}

const pending = (
  id: string,
  position: string,
  partnerId: string,
  kind: LineKind,
  reference: string,
  pendingCents: number,
): SettlementLine => ({
  _id: id,
  _pos: position,
  partnerId,
  booked: false,
  kind,
  reference,
  channel: null,
  day: null,
  at: null,
  position: null,
  pendingCents,
  ...ZERO_FIGURES,
});

const booked = (line: SettlementLine, at: string, position: string, figures: Partial<LineFigures>, channel: SaleChannel | null = null) => ({
  ...line,
  booked: true,
  channel,
  day: dayOf(at),
  at,
  position,
  ...figures,
  charging: false,
  blocking: false,
});

/** A sale's line as its charge moves: blocking its day while a reserved purchase's card is being charged. */
const charging = (line: SettlementLine, changes: Partial<SettlementLine>): SettlementLine => {
  const next = { ...line, ...changes };
  return { ...next, blocking: !next.booked && next.charging === true && next.reserved === true };
};

export const settlementLinesProjection = defineProjection<SettlementLine>({
  name: SETTLEMENT_LINES,
  handles: [
    'PurchasePaid',
    'PurchaseClaimed',
    'PurchaseResold',
    'PurchaseReserved',
    'PurchaseNotPaid',
    'PurchaseReleased',
    'ChargeBegun',
    'ChargeEnded',
    'RefundRequested',
    'RefundSucceeded',
    'RefundFailed',
    'CardLinkRedeemed',
    'CardTransactionCleared',
    'CardTransactionRefunded',
  ],
  indexes: [{ keys: { partnerId: 1, day: 1 } }, { keys: { partnerId: 1, pendingDay: 1 } }],
  // Statements are read by their partner's finance, never as a write's answer.
  answersWait: false,
  documentIds: lineIds,
  evolve(view, event, id) {
    const d = event.data as Data;
    const position = event.position;
    switch (event.type) {
      case 'RefundRequested':
        return (
          view ?? {
            ...pending(id, position, d.partnerId!, 'refund', d.refundId as string, d.amountCents as number),
            blocking: true,
            pendingDay: dayOf(d.requestedAt as string),
          }
        );
      case 'RefundFailed':
        return view && { ...view, blocking: false };
      case 'PurchaseReserved': {
        const sale =
          view ??
          pending(id, position, (d.partnerId as string | undefined) ?? event.metadata.partnerId ?? '', 'sale', d.purchaseId as string, 0);
        return charging(sale, { reserved: true });
      }
      case 'ChargeBegun': {
        const sale = view ?? pending(id, position, event.metadata.partnerId ?? '', 'sale', d.purchaseId as string, 0);
        return sale.booked ? sale : charging(sale, { charging: true, pendingDay: dayOf(d.at as string) });
      }
      case 'ChargeEnded':
        // An approved charge's sale is recorded next: its line stays to come until then.
        return view && (d.saleFollows === true ? view : charging(view, { charging: false }));
      case 'PurchaseNotPaid':
      case 'PurchaseReleased':
        return view && charging(view, { charging: false });
      case 'PurchasePaid':
      case 'PurchaseClaimed':
      case 'PurchaseResold': {
        const [at, channel] = SALES[event.type];
        const sale = pending(id, position, event.metadata.partnerId ?? '', 'sale', d.purchaseId as string, 0);
        return booked(view ?? sale, d[at] as string, position, { grossCents: d.amountCents as number }, channel);
      }
      case 'RefundSucceeded':
        return view && { ...booked(view, d.settledAt as string, position, { refundCents: view.pendingCents }), blocking: false };
      case 'CardLinkRedeemed':
      case 'CardTransactionCleared': {
        const at = (event.type === 'CardLinkRedeemed' ? d.redeemedAt : d.clearedAt) as string;
        const line = pending(
          id,
          position,
          d.partnerId!,
          'card_transaction_cleared',
          `${d.cardLinkId as string}/${d.transactionReference as string}`,
          0,
        );
        return booked(view ?? line, at, position, { incentiveCents: d.incentiveCents as number, feeCents: d.feeCents as number });
      }
      case 'CardTransactionRefunded': {
        const line = pending(
          id,
          position,
          d.partnerId!,
          'card_transaction_refunded',
          `${d.cardLinkId as string}/${d.transactionReference as string}`,
          0,
        );
        return booked(view ?? line, d.refundedAt as string, position, {
          incentiveReversedCents: d.incentiveReversedCents as number,
          feeReversedCents: d.feeReversedCents as number,
        });
      }
    }
    return view;
  },
});
