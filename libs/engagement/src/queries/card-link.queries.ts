import { findOfPartner, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { CARD_LINK_DETAILS, CardLinkDetails } from '../projections/card-link-details/card-link-details.projection';
import {
  CARD_TRANSACTIONS,
  CardTransactionDetails,
  cardTransactionId,
} from '../projections/card-transactions/card-transactions.projection';

export type CardLinkState = CardLinkDetails['state'];
export const CARD_LINK_STATES: readonly CardLinkState[] = ['linked', 'unlinked', 'fulfilled'];

/** Reads of card links, always within one partner: another partner's links do not exist. */
@Injectable()
export class CardLinkQueries {
  constructor(private readonly views: ViewStore) {}

  async link(partnerId: string, cardLinkId: string): Promise<CardLinkDetails | null> {
    return findOfPartner<CardLinkDetails>(this.views, CARD_LINK_DETAILS, cardLinkId, partnerId, (view) => !view.withdrawn);
  }

  /** The links of these ids, in the order given. */
  links(cardLinkIds: readonly string[]): Promise<CardLinkDetails[]> {
    return this.views.findByIds<CardLinkDetails>(CARD_LINK_DETAILS, cardLinkIds);
  }

  /** A link by id whoever owns it (the commands' own checks decide who may act on it). */
  anyLink(cardLinkId: string): Promise<CardLinkDetails | null> {
    return this.views.findById<CardLinkDetails>(CARD_LINK_DETAILS, cardLinkId);
  }

  userLinks(partnerId: string, userId: string, states: readonly CardLinkState[], skip: number, limit: number): Promise<CardLinkDetails[]> {
    return this.views.find<CardLinkDetails>(CARD_LINK_DETAILS, this.filter(partnerId, userId, states), {
      sort: { linkedAt: -1, _id: 1 },
      skip,
      limit,
    });
  }

  countUserLinks(partnerId: string, userId: string, states: readonly CardLinkState[]): Promise<number> {
    return this.views.count(CARD_LINK_DETAILS, this.filter(partnerId, userId, states));
  }

  /** Deals whose link the user has fulfilled (used up). */
  async fulfilledDealIds(partnerId: string, userId: string): Promise<string[]> {
    const links = await this.views.find<CardLinkDetails>(CARD_LINK_DETAILS, { userId, partnerId, withdrawn: false, state: 'fulfilled' });
    return links.map((l) => l.dealId);
  }

  async transaction(partnerId: string, cardLinkId: string, reference: string): Promise<CardTransactionDetails | null> {
    return findOfPartner<CardTransactionDetails>(this.views, CARD_TRANSACTIONS, cardTransactionId(cardLinkId, reference), partnerId);
  }

  /** A link's transactions, in the order they were first reported. */
  transactions(cardLinkId: string, skip: number, limit: number): Promise<CardTransactionDetails[]> {
    return this.views.find<CardTransactionDetails>(CARD_TRANSACTIONS, { cardLinkId }, { sort: { firstPosition: 1 }, skip, limit });
  }

  countTransactions(cardLinkId: string): Promise<number> {
    return this.views.count(CARD_TRANSACTIONS, { cardLinkId });
  }

  private filter(partnerId: string, userId: string, states: readonly CardLinkState[]) {
    return { userId, partnerId, withdrawn: false, ...(states.length ? { state: { $in: [...states] } } : {}) };
  }
}
