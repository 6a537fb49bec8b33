import { Decider, DomainCommand, ignoredEvent, NotFound, unknownCommand, ValidationFailed, xmlDateTimeSpanMs } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import type { CardLinkCreation, CardLinkEvent, CardTransactionFacts } from './card-link.events';
import { CardLinkTerms, redemptionOutcome, refundOutcome } from './card-link-terms';

/** Who may act on a link: its partner, and with a user's access token only that user. */
interface Actor {
  cardLinkId: string;
  partnerId: string;
  userId?: string;
}

/** Opens the link's stream (POST /card_links), or relinks it if it was unlinked; a linked or fulfilled link stays as it is. */
export type EnsureCardLinked = DomainCommand<'EnsureCardLinked', CardLinkCreation & { at: string }>;
export type UnlinkCard = DomainCommand<'UnlinkCard', Actor>;
export type RelinkCard = DomainCommand<'RelinkCard', Actor>;
/** What a partner reports of one of the link's transactions. */
export type TransactionReport = Actor & {
  transactionReference: string;
  transactionAmount: number;
  transactionDate: string;
  transactionAt: string;
  maxRedemption: boolean;
  /** Where the card was used, when the report says. */
  merchant?: string;
  /** How long before the link a transaction may be dated and still count as after it (partners' clocks drift), ms. */
  clockSkewMs: number;
};
export type RedeemCardLink = DomainCommand<'RedeemCardLink', TransactionReport>;
export const CARD_TRANSACTION_PHASES = ['authorised', 'cleared', 'refunded'] as const;
export type CardTransactionPhase = (typeof CARD_TRANSACTION_PHASES)[number];
/** One phase of a card transaction, as the card network's partner reports it. */
export type ReportCardTransaction = DomainCommand<'ReportCardTransaction', TransactionReport & { phase: CardTransactionPhase }>;
export type CardLinkCommand = EnsureCardLinked | UnlinkCard | RelinkCard | RedeemCardLink | ReportCardTransaction;

/** A transaction recorded on the link: to recognise its repeats, and what its later phases may undo. */
interface RecordedTransaction {
  /** The amount its first phase named (authorised, or cleared). */
  amount: number;
  at: string;
  maxRedemption: boolean;
  phase: CardTransactionPhase;
  /** Set once cleared: the amount cleared and what it earned (a redemption is a cleared transaction). */
  clearedAmount: number;
  qualifies: boolean;
  incentiveCents: number;
  feeCents: number;
  /** Set once refunded. */
  refundedAmount: number;
}

/** A link's stream: not opened yet, or an opened link, linked ⇄ unlinked, or fulfilled for good. */
export type CardLink = { status: 'unopened' } | MovableLink | FulfilledLink;
export type OpenedLink = MovableLink | FulfilledLink;

interface LinkRecord {
  partnerId: string;
  userId: string;
  dealId: string;
  terms: CardLinkTerms;
  linkedAt: string;
  /** Qualifying transactions so far, and the incentive they earned, cents. */
  qualifying: number;
  earned: number;
  transactions: ImmutableMap<string, RecordedTransaction>;
}

export interface MovableLink extends LinkRecord {
  status: 'linked' | 'unlinked';
}

export interface FulfilledLink extends LinkRecord {
  status: 'fulfilled';
  /** Why and by which transaction it was fulfilled, and the state it left. */
  fulfilment: {
    reason: 'max_redemption' | 'num_qualifying';
    transactionReference: string | null;
    before: 'linked' | 'unlinked';
  };
}

/** Thrown when the link's stream was never opened (its place exists: the handler opens it and tries again). */
export class CardLinkNotOpened extends NotFound {}

const refuse = (field: string, message: string, resource = 'card_link') =>
  new ValidationFailed([{ type: 'invalid', resource, field, message }]);

/** The link an actor may act on; not found for another partner, or another user's token. */
function owned(link: CardLink, actor: Actor): OpenedLink {
  if (link.status === 'unopened') throw new CardLinkNotOpened('card link not found');
  if (link.partnerId !== actor.partnerId || (actor.userId !== undefined && link.userId !== actor.userId))
    throw new NotFound('card link not found');
  return link;
}

/** How long past `now` a transaction may be dated (a partner's clock a little ahead of ours). */
const FUTURE_LEEWAY_MS = 24 * 3_600_000;

/**
 * A card link: linked ⇄ unlinked, and fulfilled for good by a redemption with
 * `max_redemption`, or by its `num_qualifying`-th qualifying one. Redeeming is allowed from linked
 * only; a transaction reference is recorded once per link (a repeat with the same facts changes
 * nothing; with other facts it is refused).
 */
export const cardLinkDecider: Decider<CardLink, CardLinkCommand, CardLinkEvent> = {
  initialState: () => ({ status: 'unopened' }),
  decide(command, link, now) {
    switch (command.type) {
      case 'EnsureCardLinked': {
        const { at, ...creation } = command.data;
        if (link.status === 'unopened') return [{ type: 'CardLinkOpened', data: creation }];
        return link.status === 'unlinked' ? [{ type: 'CardRelinked', data: { cardLinkId: creation.cardLinkId, at } }] : [];
      }
      case 'UnlinkCard':
        return move(command.data, owned(link, command.data), 'unlinked', now);
      case 'RelinkCard':
        return move(command.data, owned(link, command.data), 'linked', now);
      case 'RedeemCardLink':
        return redeem(command.data, owned(link, command.data), now);
      case 'ReportCardTransaction':
        return decidePhase(command.data, owned(link, command.data), now);
      default:
        return unknownCommand(command);
    }
  },
  evolve(link, event) {
    if (event.type === 'CardLinkOpened') {
      const { partnerId, userId, dealId, terms, linkedAt } = event.data;
      return { status: 'linked', partnerId, userId, dealId, terms, linkedAt, qualifying: 0, earned: 0, transactions: ImmutableMap() };
    }
    // Every other event follows the opening (one before it is none the decider wrote, and is ignored).
    if (link.status === 'unopened') return link;
    switch (event.type) {
      case 'CardUnlinked':
        return { ...record(link), status: 'unlinked' };
      case 'CardRelinked':
        return { ...record(link), status: 'linked' };
      case 'CardLinkRedeemed':
      case 'CardTransactionCleared': {
        const { transactionReference, transactionAmount, transactionAt, maxRedemption, qualifies, incentiveCents, feeCents } = event.data;
        const before = link.transactions.get(transactionReference);
        const cleared = { phase: 'cleared' as const, clearedAmount: transactionAmount, maxRedemption, qualifies, incentiveCents, feeCents };
        return {
          ...link,
          qualifying: link.qualifying + (qualifies ? 1 : 0),
          earned: link.earned + incentiveCents,
          transactions: link.transactions.set(
            transactionReference,
            before ? { ...before, ...cleared } : { amount: transactionAmount, at: transactionAt, refundedAmount: 0, ...cleared },
          ),
        };
      }
      case 'CardTransactionAuthorised': {
        const { transactionReference, transactionAmount, transactionAt } = event.data;
        const authorised: RecordedTransaction = {
          amount: transactionAmount,
          at: transactionAt,
          maxRedemption: false,
          phase: 'authorised',
          clearedAmount: 0,
          qualifies: false,
          incentiveCents: 0,
          feeCents: 0,
          refundedAmount: 0,
        };
        return { ...link, transactions: link.transactions.set(transactionReference, authorised) };
      }
      case 'CardTransactionRefunded': {
        const { transactionReference, transactionAmount, qualifies, incentiveReversedCents, feeReversedCents } = event.data;
        const before = link.transactions.get(transactionReference)!;
        return {
          ...link,
          qualifying: link.qualifying - (event.data.qualifyingLost ? 1 : 0),
          earned: link.earned - incentiveReversedCents,
          transactions: link.transactions.set(transactionReference, {
            ...before,
            phase: 'refunded',
            qualifies,
            incentiveCents: before.incentiveCents - incentiveReversedCents,
            feeCents: before.feeCents - feeReversedCents,
            refundedAmount: transactionAmount,
          }),
        };
      }
      case 'CardLinkFulfilled': {
        const before = link.status === 'fulfilled' ? 'linked' : link.status;
        const fulfilment = { reason: event.data.reason, transactionReference: event.data.transactionReference ?? null, before };
        return { ...record(link), status: 'fulfilled', fulfilment };
      }
      case 'CardLinkFulfilmentReversed':
        return { ...record(link), status: event.data.state };
      default:
        return ignoredEvent(event, link);
    }
  },
};

/** What an opened link holds whatever its status (a status's own fields left behind). */
function record(link: OpenedLink): LinkRecord {
  if (link.status !== 'fulfilled') return link;
  const { status: _status, fulfilment: _fulfilment, ...rest } = link;
  return rest;
}

/** Unlinks or relinks a link: a fulfilled one stays as it is, and one already so changes nothing. */
function move({ cardLinkId }: Actor, link: OpenedLink, wanted: MovableLink['status'], now: Date): CardLinkEvent[] {
  if (link.status === 'fulfilled') throw refuse('state', 'is fulfilled: a fulfilled card link is neither linked nor unlinked again');
  if (link.status === wanted) return [];
  const at = now.toISOString();
  return [wanted === 'unlinked' ? { type: 'CardUnlinked', data: { cardLinkId, at } } : { type: 'CardRelinked', data: { cardLinkId, at } }];
}

/** A redemption: a transaction cleared at once, on a linked link (or the clearing of one authorised before). */
function redeem(command: RedeemCardLink['data'], link: OpenedLink, now: Date): CardLinkEvent[] {
  const { cardLinkId, transactionReference, transactionAmount, transactionDate, transactionAt, maxRedemption, clockSkewMs } = command;
  const known = link.transactions.get(transactionReference);
  // A redemption of a transaction reported authorised is its clearing.
  if (known?.phase === 'authorised') return decidePhase({ ...command, phase: 'cleared' }, link, now);
  if (known) {
    if (known.amount === transactionAmount && known.at === transactionAt && known.maxRedemption === maxRedemption) return [];
    throw refuse('transaction_reference', 'was already recorded on this card link with another amount, date or max_redemption');
  }
  if (link.status !== 'linked') throw refuse('state', `is ${link.status}: only a linked card link is redeemed`);
  checkDate(link, transactionDate, transactionAt, clockSkewMs, now);
  const outcome = redemptionOutcome(link.terms, link, transactionAmount, maxRedemption);
  const redeemedAt = now.toISOString();
  const { qualifies, incentiveCents, feeCents } = outcome;
  const events: CardLinkEvent[] = [
    { type: 'CardLinkRedeemed', data: { ...factsOf(link, command), maxRedemption, qualifies, incentiveCents, feeCents, redeemedAt } },
  ];
  if (outcome.fulfils)
    events.push({ type: 'CardLinkFulfilled', data: { cardLinkId, reason: outcome.fulfils, at: redeemedAt, transactionReference } });
  return events;
}

/** A transaction's date: not before the link (within the partners' clock skew), not in the future. */
function checkDate(link: OpenedLink, transactionDate: string, transactionAt: string, clockSkewMs: number, now: Date): void {
  const at = Date.parse(transactionAt);
  // The date covers its whole last digit (a second without a fraction): any of it within the skew counts.
  const through = at + (xmlDateTimeSpanMs(transactionDate) ?? 1);
  if (through <= Date.parse(link.linkedAt) - clockSkewMs)
    throw refuse('transaction_date', `is before the card was linked (${link.linkedAt})`);
  if (at > now.getTime() + FUTURE_LEEWAY_MS) throw refuse('transaction_date', 'is in the future');
}

/** What a record of one of the link's transactions names: the link's own facts and the partner's report. */
function factsOf(
  link: OpenedLink,
  report: Pick<
    CardTransactionFacts,
    'cardLinkId' | 'transactionReference' | 'transactionAmount' | 'transactionDate' | 'transactionAt' | 'merchant'
  >,
): CardTransactionFacts {
  const { cardLinkId, transactionReference, transactionAmount, transactionDate, transactionAt, merchant } = report;
  return {
    cardLinkId,
    dealId: link.dealId,
    partnerId: link.partnerId,
    userId: link.userId,
    transactionReference,
    transactionAmount,
    transactionDate,
    transactionAt,
    ...(merchant === undefined ? {} : { merchant }),
  };
}

const PHASE_ORDER: Record<CardTransactionPhase, number> = { authorised: 0, cleared: 1, refunded: 2 };

/**
 * One phase of a card transaction. Authorised: recorded, nothing earned, on a linked link.
 * Cleared: earns as a redemption does (`PUT /card_links/:id/redeem` is a transaction reported
 * cleared at once); a transaction authorised while linked clears whatever the link's state since,
 * one never authorised needs the link linked. Refunded: of a cleared transaction, at most its
 * cleared amount, reversing what the amount refunded took away (`refundOutcome`) and the link's
 * fulfilment if the refund took away what fulfilled it; of an authorised one, its authorisation
 * voided (nothing was earned). Each phase is recorded once: its repeat with the same amount
 * changes nothing, with another is refused; a phase reported after a later one (networks deliver
 * out of order) changes nothing.
 */
function decidePhase(command: ReportCardTransaction['data'], link: OpenedLink, now: Date): CardLinkEvent[] {
  const { cardLinkId, phase, transactionReference, transactionAmount, transactionDate, transactionAt, maxRedemption, clockSkewMs } =
    command;
  const known = link.transactions.get(transactionReference);
  const facts = factsOf(link, command);
  const at = now.toISOString();
  if (known && PHASE_ORDER[known.phase] >= PHASE_ORDER[phase]) {
    const recorded = phase === 'authorised' ? known.amount : phase === 'cleared' ? known.clearedAmount : known.refundedAmount;
    // An authorisation or clearing reported after a later phase was never recorded: nothing to compare it with.
    if (known.phase !== phase || recorded === transactionAmount) return [];
    throw refuse('transaction_amount', `differs from the ${phase} amount already recorded for ${transactionReference} (${recorded})`);
  }
  switch (phase) {
    case 'authorised':
      if (link.status !== 'linked') throw refuse('state', `is ${link.status}: only a linked card link takes new transactions`);
      checkDate(link, transactionDate, transactionAt, clockSkewMs, now);
      return [{ type: 'CardTransactionAuthorised', data: { ...facts, authorisedAt: at } }];
    case 'cleared': {
      if (!known) {
        if (link.status !== 'linked') throw refuse('state', `is ${link.status}: only a linked card link takes new transactions`);
        checkDate(link, transactionDate, transactionAt, clockSkewMs, now);
      }
      const outcome = redemptionOutcome(link.terms, link, transactionAmount, maxRedemption);
      const events: CardLinkEvent[] = [
        {
          type: 'CardTransactionCleared',
          data: {
            ...facts,
            maxRedemption,
            qualifies: outcome.qualifies,
            incentiveCents: outcome.incentiveCents,
            feeCents: outcome.feeCents,
            clearedAt: at,
          },
        },
      ];
      if (outcome.fulfils && link.status !== 'fulfilled')
        events.push({ type: 'CardLinkFulfilled', data: { cardLinkId, reason: outcome.fulfils, at, transactionReference } });
      return events;
    }
    case 'refunded': {
      if (!known) throw refuse('transaction_reference', `was never authorised or cleared on this card link`);
      const ceiling = known.phase === 'cleared' ? known.clearedAmount : known.amount;
      if (known.phase === 'authorised' && transactionAmount !== ceiling)
        throw refuse('transaction_amount', `voids the authorisation of ${transactionReference} whole: give its amount (${ceiling})`);
      if (transactionAmount > ceiling)
        throw refuse('transaction_amount', `is more than the ${known.phase} amount of ${transactionReference} (${ceiling})`);
      const outcome =
        known.phase === 'cleared'
          ? refundOutcome(link.terms, known, known.clearedAmount - transactionAmount)
          : { qualifies: false, incentiveReversedCents: 0, feeReversedCents: 0 };
      const qualifyingLost = known.qualifies && !outcome.qualifies;
      const events: CardLinkEvent[] = [{ type: 'CardTransactionRefunded', data: { ...facts, ...outcome, qualifyingLost, refundedAt: at } }];
      const { terms } = link;
      const fulfilment = link.status === 'fulfilled' ? link.fulfilment : null;
      const qualifyingAfter = link.qualifying - (qualifyingLost ? 1 : 0);
      // Fulfilled by its count (if set), the link stays so while the count still holds.
      const countHolds = (terms.numQualifying ?? 0) > 0 && qualifyingAfter >= terms.numQualifying!;
      const undone =
        fulfilment !== null &&
        !countHolds &&
        (fulfilment.reason === 'num_qualifying' ||
          (fulfilment.transactionReference === transactionReference && transactionAmount === ceiling));
      if (undone)
        events.push({
          type: 'CardLinkFulfilmentReversed',
          data: { cardLinkId, transactionReference, reason: fulfilment.reason, state: fulfilment.before, at },
        });
      return events;
    }
  }
}
