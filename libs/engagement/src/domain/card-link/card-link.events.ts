import { type DomainEvent, sandboxScoped } from '@deals/kernel';
import type { CardLinkTerms } from './card-link-terms';

/** A link as it is made: who linked which deal, and on what terms. */
export interface CardLinkCreation {
  cardLinkId: string;
  dealId: string;
  partnerId: string;
  userId: string;
  merchantId: string | null;
  terms: CardLinkTerms;
  linkedAt: string;
}

/**
 * On the deal's linkage stream: the user took one of the deal's `max_linkage` places, and the link
 * exists from here (the link's own stream is opened right after with the same facts).
 */
export type CardLinkPlaceTaken = DomainEvent<'CardLinkPlaceTaken', CardLinkCreation>;
/** On the deal's linkage stream: a place taken by a call that was refused as a whole (`deal_ids`) is given back; its link never existed. */
export type CardLinkPlaceReturned = DomainEvent<'CardLinkPlaceReturned', { dealId: string; cardLinkId: string; userId: string }>;
export type CardLinkageEvent = CardLinkPlaceTaken | CardLinkPlaceReturned;

/** The link's own stream begins with the facts of its place. */
export type CardLinkOpened = DomainEvent<'CardLinkOpened', CardLinkCreation>;
export type CardUnlinked = DomainEvent<'CardUnlinked', { cardLinkId: string; at: string }>;
export type CardRelinked = DomainEvent<'CardRelinked', { cardLinkId: string; at: string }>;
/** What every record of a card transaction names (a redemption's, and each phase's). */
export interface CardTransactionFacts {
  cardLinkId: string;
  dealId: string;
  partnerId: string;
  userId: string;
  transactionReference: string;
  /** Cents: what was authorised, cleared, or refunded in that phase. */
  transactionAmount: number;
  /** As the partner wrote it, and the instant it names. */
  transactionDate: string;
  transactionAt: string;
  /** Where the card was used, as the report named it (absent when none did). */
  merchant?: string;
}

/**
 * One of the user's card transactions, reported by the partner, and what it earned: the incentive
 * owed to the user and the partner's fee, in cents (both 0 when it does not qualify).
 */
export type CardLinkRedeemed = DomainEvent<
  'CardLinkRedeemed',
  CardTransactionFacts & {
    maxRedemption: boolean;
    qualifies: boolean;
    incentiveCents: number;
    feeCents: number;
    redeemedAt: string;
  }
>;
/** `transactionReference`: the transaction that fulfilled it (absent on links fulfilled before it was kept). */
export type CardLinkFulfilled = DomainEvent<
  'CardLinkFulfilled',
  { cardLinkId: string; reason: 'max_redemption' | 'num_qualifying'; at: string; transactionReference?: string }
>;

/** The card network authorised the transaction: recorded, nothing earned yet. */
export type CardTransactionAuthorised = DomainEvent<'CardTransactionAuthorised', CardTransactionFacts & { authorisedAt: string }>;
/**
 * The transaction cleared (settled between the banks): what it earned is credited, as a redemption's
 * is, and it counts towards the link's `num_qualifying` and `maximum_allowance`.
 */
export type CardTransactionCleared = DomainEvent<
  'CardTransactionCleared',
  CardTransactionFacts & { maxRedemption: boolean; qualifies: boolean; incentiveCents: number; feeCents: number; clearedAt: string }
>;
/**
 * The transaction was refunded, in whole or part (`transactionAmount`), or its authorisation voided
 * before clearing: the incentive and fee it earned are reversed down to what the amount kept still
 * earns; `qualifies` says whether it still counts towards the link, `qualifyingLost` whether it
 * counted until this refund.
 */
export type CardTransactionRefunded = DomainEvent<
  'CardTransactionRefunded',
  CardTransactionFacts & {
    qualifies: boolean;
    qualifyingLost: boolean;
    incentiveReversedCents: number;
    feeReversedCents: number;
    refundedAt: string;
  }
>;
/**
 * A refund took away what fulfilled the link: it is back in the state it was in before (`state`:
 * linked, and earning again; or unlinked, when a transaction authorised earlier cleared while it was).
 */
export type CardLinkFulfilmentReversed = DomainEvent<
  'CardLinkFulfilmentReversed',
  {
    cardLinkId: string;
    transactionReference: string;
    reason: 'max_redemption' | 'num_qualifying';
    state: 'linked' | 'unlinked';
    at: string;
  }
>;
export type CardTransactionEvent = CardTransactionAuthorised | CardTransactionCleared | CardTransactionRefunded;

export type CardLinkEvent =
  CardLinkOpened | CardUnlinked | CardRelinked | CardLinkRedeemed | CardLinkFulfilled | CardTransactionEvent | CardLinkFulfilmentReversed;

export const cardLinkStream = (cardLinkId: string) => `cardlink-${cardLinkId}`;
/** A card-linked deal's places (`max_linkage`), and who holds them. */
export const cardLinkageStream = (dealId: string) => `cardlinkage-${dealId}`;
/**
 * The places a partner's links of a deal take: the deal's own for a live partner, a copy of the
 * sandbox's own for a sandbox, so that test links never take a live deal's places.
 */
export const partnerCardLinkageStream = (dealId: string, partnerId: string | null | undefined) =>
  sandboxScoped(cardLinkageStream(dealId), partnerId);
