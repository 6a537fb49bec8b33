import { defineProjection, RecordedEvent, ViewDocument } from '@deals/kernel';
import type { CardLinkEvent } from '../../domain/card-link/card-link.events';

/** "Which transactions did card link X see, in which phase, and what did each earn and give back?" */
export interface CardTransactionDetails extends ViewDocument {
  partnerId: string;
  cardLinkId: string;
  dealId: string;
  userId: string;
  reference: string;
  phase: 'authorised' | 'cleared' | 'refunded';
  transactionDate: string;
  /** Where the card was used, as the first report naming it said; null when none did. */
  merchant?: string | null;
  /** Cents; null until that phase is reported. */
  authorisedAmount: number | null;
  clearedAmount: number | null;
  refundedAmount: number | null;
  maxRedemption: boolean;
  /** Counts towards the link now. */
  qualifies: boolean;
  /** Credited on clearing, and reversed by a refund (cents). */
  incentiveCents: number;
  incentiveReversedCents: number;
  feeCents: number;
  feeReversedCents: number;
  authorisedAt: string | null;
  clearedAt: string | null;
  refundedAt: string | null;
  /** Where in the log it was first reported: the list's order (several may be reported in one millisecond). */
  firstPosition: string;
}

export const CARD_TRANSACTIONS = 'card_transactions';

/** A transaction's id in the view: its link and the partner's reference. */
export const cardTransactionId = (cardLinkId: string, reference: string) => `${cardLinkId}/${reference}`;

type Facts = Pick<
  Extract<CardLinkEvent, { type: 'CardTransactionAuthorised' }>['data'],
  'cardLinkId' | 'dealId' | 'partnerId' | 'userId' | 'transactionReference' | 'transactionDate'
>;

const blank = (data: Facts, position: string): CardTransactionDetails => ({
  _id: cardTransactionId(data.cardLinkId, data.transactionReference),
  _pos: position,
  partnerId: data.partnerId,
  cardLinkId: data.cardLinkId,
  dealId: data.dealId,
  userId: data.userId,
  reference: data.transactionReference,
  phase: 'authorised',
  transactionDate: data.transactionDate,
  authorisedAmount: null,
  clearedAmount: null,
  refundedAmount: null,
  maxRedemption: false,
  qualifies: false,
  incentiveCents: 0,
  incentiveReversedCents: 0,
  feeCents: 0,
  feeReversedCents: 0,
  authorisedAt: null,
  clearedAt: null,
  refundedAt: null,
  firstPosition: position,
});

/** Every transaction of a link, a redemption (`PUT /card_links/:id/redeem`) as one cleared at once. */
export const cardTransactionsProjection = defineProjection<CardTransactionDetails>({
  name: CARD_TRANSACTIONS,
  handles: ['CardTransactionAuthorised', 'CardTransactionCleared', 'CardLinkRedeemed', 'CardTransactionRefunded'],
  indexes: [{ keys: { cardLinkId: 1, firstPosition: 1 } }, { keys: { partnerId: 1 } }],
  documentIds: (event) => {
    const { cardLinkId, transactionReference } = event.data as { cardLinkId: string; transactionReference: string };
    return [cardTransactionId(cardLinkId, transactionReference)];
  },
  evolve(view, recorded) {
    const next = phaseFolded(view, recorded);
    // The first report that names where the card was used names it for every phase.
    const merchant = view?.merchant ?? (recorded.data as { merchant?: string }).merchant ?? null;
    return next && { ...next, merchant };
  },
});

function phaseFolded(view: CardTransactionDetails | null, recorded: RecordedEvent): CardTransactionDetails | null {
  const event = recorded as unknown as CardLinkEvent;
  const position = recorded.position;
  switch (event.type) {
    case 'CardTransactionAuthorised':
      return {
        ...(view ?? blank(event.data, position)),
        _pos: position,
        authorisedAmount: event.data.transactionAmount,
        authorisedAt: event.data.authorisedAt,
      };
    case 'CardTransactionCleared':
    case 'CardLinkRedeemed': {
      const clearedAt = event.type === 'CardTransactionCleared' ? event.data.clearedAt : event.data.redeemedAt;
      const { transactionAmount, maxRedemption, qualifies, incentiveCents, feeCents } = event.data;
      return {
        ...(view ?? blank(event.data, position)),
        _pos: position,
        phase: 'cleared',
        clearedAmount: transactionAmount,
        maxRedemption,
        qualifies,
        incentiveCents,
        feeCents,
        clearedAt,
      };
    }
    case 'CardTransactionRefunded':
      return (
        view && {
          ...view,
          _pos: position,
          phase: 'refunded',
          refundedAmount: event.data.transactionAmount,
          qualifies: event.data.qualifies,
          incentiveReversedCents: event.data.incentiveReversedCents,
          feeReversedCents: event.data.feeReversedCents,
          refundedAt: event.data.refundedAt,
        }
      );
    default:
      return view;
  }
}
