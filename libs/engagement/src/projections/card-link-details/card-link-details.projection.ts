import { defineProjection, ViewDocument } from '@deals/kernel';
import type { CardLinkCreation, CardLinkEvent, CardLinkageEvent } from '../../domain/card-link/card-link.events';

/** "What is card link X, which links does user Y hold, and what have they earned?" */
export interface CardLinkDetails extends ViewDocument {
  partnerId: string;
  userId: string;
  dealId: string;
  merchantId: string | null;
  linkedAt: string;
  state: 'linked' | 'unlinked' | 'fulfilled';
  /** The place was given back by a call refused as a whole: the link never existed for the partner. */
  withdrawn: boolean;
  /** Transactions recorded, those that qualified, and the cents they earned the user and cost the partner. */
  redemptions: number;
  qualifying: number;
  incentiveCents: number;
  feeCents: number;
}

export const CARD_LINK_DETAILS = 'card_link_details';

const created = (data: CardLinkCreation, position: CardLinkDetails['_pos']): CardLinkDetails => ({
  _id: data.cardLinkId,
  _pos: position,
  partnerId: data.partnerId,
  userId: data.userId,
  dealId: data.dealId,
  merchantId: data.merchantId,
  linkedAt: data.linkedAt,
  state: 'linked',
  withdrawn: false,
  redemptions: 0,
  qualifying: 0,
  incentiveCents: 0,
  feeCents: 0,
});

/** Filled from the deal's linkage stream (a link exists once its place is taken) and the link's own stream. */
export const cardLinkDetailsProjection = defineProjection<CardLinkDetails>({
  name: CARD_LINK_DETAILS,
  handles: [
    'CardLinkPlaceTaken',
    'CardLinkPlaceReturned',
    'CardLinkOpened',
    'CardUnlinked',
    'CardRelinked',
    'CardLinkRedeemed',
    'CardLinkFulfilled',
    'CardTransactionAuthorised',
    'CardTransactionCleared',
    'CardTransactionRefunded',
    'CardLinkFulfilmentReversed',
  ],
  indexes: [{ keys: { userId: 1 } }, { keys: { partnerId: 1 } }, { keys: { dealId: 1 } }],
  documentIds: (event) => [(event.data as { cardLinkId: string }).cardLinkId],
  evolve(view, recorded) {
    const event = recorded as unknown as CardLinkEvent | CardLinkageEvent;
    switch (event.type) {
      case 'CardLinkPlaceTaken':
      case 'CardLinkOpened':
        return view ?? created(event.data, recorded.position);
      case 'CardLinkPlaceReturned':
        return view && { ...view, withdrawn: true };
      case 'CardUnlinked':
        return view && { ...view, state: 'unlinked' };
      case 'CardRelinked':
        return view && { ...view, state: 'linked' };
      case 'CardLinkFulfilled':
        return view && { ...view, state: 'fulfilled' };
      case 'CardLinkFulfilmentReversed':
        return view && { ...view, state: event.data.state };
      case 'CardTransactionRefunded':
        return (
          view && {
            ...view,
            qualifying: view.qualifying - (event.data.qualifyingLost ? 1 : 0),
            incentiveCents: view.incentiveCents - event.data.incentiveReversedCents,
            feeCents: view.feeCents - event.data.feeReversedCents,
          }
        );
      case 'CardTransactionAuthorised':
        return view;
      case 'CardLinkRedeemed':
      case 'CardTransactionCleared':
        return (
          view && {
            ...view,
            redemptions: view.redemptions + 1,
            qualifying: view.qualifying + (event.data.qualifies ? 1 : 0),
            incentiveCents: view.incentiveCents + event.data.incentiveCents,
            feeCents: view.feeCents + event.data.feeCents,
          }
        );
    }
  },
});
