import type { RecordedEvent } from '@deals/kernel';

/** A card-link redemption's own figures: the transaction, the incentive owed and the fee, in cents. */
export function detailsOf(event: RecordedEvent): Record<string, unknown> | undefined {
  if (event.type === 'RefundSucceeded') return { refund_id: (event.data as { refundId: string }).refundId };
  if (event.type === 'CouponRedemptionRolledBack') {
    const { redeemedAt, reason, note } = event.data as { redeemedAt: string; reason: string; note: string | null };
    return { rollback: { redeemed_at: redeemedAt, reason, note } };
  }
  if (event.type === 'CardTransactionAuthorised' || event.type === 'CardTransactionCleared' || event.type === 'CardTransactionRefunded')
    return { card_transaction: cardTransactionOf(event) };
  if (event.type !== 'CardLinkRedeemed') return undefined;
  const d = event.data as {
    transactionReference: string;
    transactionAmount: number;
    transactionDate: string;
    maxRedemption: boolean;
    qualifies: boolean;
    incentiveCents: number;
    feeCents: number;
  };
  return {
    redemption: {
      transaction_reference: d.transactionReference,
      transaction_amount: d.transactionAmount,
      transaction_date: d.transactionDate,
      max_redemption: d.maxRedemption,
      qualifies: d.qualifies,
      incentive_amount: d.incentiveCents,
      fee_amount: d.feeCents,
    },
  };
}

/** A card transaction's phase as the feed tells it: the amount of that phase, and what it earned or gave back, cents. */
function cardTransactionOf(event: RecordedEvent) {
  const d = event.data as {
    transactionReference: string;
    transactionAmount: number;
    transactionDate: string;
    incentiveCents?: number;
    feeCents?: number;
    incentiveReversedCents?: number;
    feeReversedCents?: number;
  };
  const phase =
    event.type === 'CardTransactionAuthorised' ? 'authorised' : event.type === 'CardTransactionCleared' ? 'cleared' : 'refunded';
  return {
    transaction_reference: d.transactionReference,
    phase,
    transaction_amount: d.transactionAmount,
    transaction_date: d.transactionDate,
    incentive_amount: d.incentiveCents ?? 0,
    fee_amount: d.feeCents ?? 0,
    incentive_reversed: d.incentiveReversedCents ?? 0,
    fee_reversed: d.feeReversedCents ?? 0,
  };
}
