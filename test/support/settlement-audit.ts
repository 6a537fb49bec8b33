import { createHash } from 'node:crypto';
import type { RecordedEvent } from '@deals/kernel';

/**
 * What an auditor computes from the event log alone, by the rules docs/api.md states, with nothing
 * of the service's own settlement code: each partner's line items by UTC day, as the CSV the
 * statement's digest is taken of.
 */
export interface AuditedLine {
  partnerId: string;
  day: string;
  row: string[];
  figures: number[];
}

/**
 * As docs/api.md says: digits (or nothing) bare; any other text quoted (RFC 4180), with a single quote before a
 * formula's first character at its start and after each separator or line break inside it.
 */
const csvField = (value: string) => {
  if (/^[0-9]*$/.test(value)) return value;
  let text = '';
  for (let i = 0; i < value.length; i++) {
    const startsCell = i === 0 ? /[=+\-@\t\r]/ : /[=+\-@]/;
    if ((i === 0 || '\r\n\t,;|'.includes(value[i - 1])) && startsCell.test(value[i])) text += "'";
    text += value[i] === '"' ? '""' : value[i];
  }
  return `"${text}"`;
};

export function auditedLines(events: readonly RecordedEvent[]): AuditedLine[] {
  const partnerOfPurchase = new Map<string, string>();
  const refundAsked = new Map<string, { partnerId: string; amount: number }>();
  const lines: AuditedLine[] = [];
  const line = (
    partnerId: string,
    at: string,
    position: string,
    id: string,
    kind: string,
    reference: string,
    channel: string,
    f: number[],
  ) => lines.push({ partnerId, day: at.slice(0, 10), row: [position, id, kind, reference, channel, at, ...f.map(String)], figures: f });
  for (const e of events) {
    const d = e.data as Record<string, any>;
    switch (e.type) {
      case 'PurchaseReserved':
        partnerOfPurchase.set(d.purchaseId, d.partnerId);
        break;
      case 'PurchasePaid':
      case 'PurchaseClaimed':
      case 'PurchaseResold': {
        const at = e.type === 'PurchasePaid' ? d.paidAt : e.type === 'PurchaseClaimed' ? d.claimedAt : d.resoldAt;
        const channel = e.type === 'PurchasePaid' ? 'card' : e.type === 'PurchaseClaimed' ? 'reservation' : 'reseller';
        line(partnerOfPurchase.get(d.purchaseId)!, at, e.position, `sale:${d.purchaseId}`, 'sale', d.purchaseId, channel, [
          d.amountCents,
          0,
          0,
          0,
          0,
          0,
        ]);
        break;
      }
      case 'RefundRequested':
        refundAsked.set(d.refundId, { partnerId: d.partnerId, amount: d.amountCents });
        break;
      case 'RefundSucceeded': {
        const asked = refundAsked.get(d.refundId)!;
        line(asked.partnerId, d.settledAt, e.position, `refund:${d.refundId}`, 'refund', d.refundId, '', [0, asked.amount, 0, 0, 0, 0]);
        break;
      }
      case 'CardLinkRedeemed':
      case 'CardTransactionCleared':
        if (d.incentiveCents + d.feeCents > 0) {
          const reference = `${d.cardLinkId}/${d.transactionReference}`;
          const at = e.type === 'CardLinkRedeemed' ? d.redeemedAt : d.clearedAt;
          line(d.partnerId, at, e.position, `ct:${reference}:cleared`, 'card_transaction_cleared', reference, '', [
            0,
            0,
            d.incentiveCents,
            0,
            d.feeCents,
            0,
          ]);
        }
        break;
      case 'CardTransactionRefunded':
        if (d.incentiveReversedCents + d.feeReversedCents > 0) {
          const reference = `${d.cardLinkId}/${d.transactionReference}`;
          line(d.partnerId, d.refundedAt, e.position, `ct:${reference}:refunded`, 'card_transaction_refunded', reference, '', [
            0,
            0,
            0,
            d.incentiveReversedCents,
            0,
            d.feeReversedCents,
          ]);
        }
        break;
    }
  }
  return lines;
}

/** A partner's day as the auditor computes it: the figures, the net, and the digest of its CSV. */
export function auditedDay(lines: readonly AuditedLine[], partnerId: string, day: string) {
  const mine = lines.filter((l) => l.partnerId === partnerId && l.day === day);
  const sum = [0, 1, 2, 3, 4, 5].map((i) => mine.reduce((n, l) => n + l.figures[i], 0));
  const header =
    'position,line_id,kind,reference,channel,at,gross_cents,refund_cents,incentive_cents,incentive_reversed_cents,fee_cents,fee_reversed_cents';
  const csv = [header, ...mine.map((l) => l.row.map(csvField).join(','))].map((r) => `${r}\n`).join('');
  return {
    gross_sales_cents: sum[0],
    refunds_cents: sum[1],
    incentives_credited_cents: sum[2],
    incentives_reversed_cents: sum[3],
    fees_cents: sum[4],
    fees_reversed_cents: sum[5],
    net_cents: sum[0] - sum[1] - sum[2] + sum[3] - sum[4] + sum[5],
    line_item_count: mine.length,
    digest: createHash('sha256').update(csv).digest('hex'),
    csv,
  };
}
