import { Decider, DomainCommand, NotFound, ValidationFailed, xmlDateTimeSpanMs } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import type { CardLinkCreation, CardLinkEvent } from './card-link.events';
import { CardLinkTerms, redemptionOutcome } from './card-link-terms';

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
export type RedeemCardLink = DomainCommand<
  'RedeemCardLink',
  Actor & {
    transactionReference: string;
    transactionAmount: number;
    transactionDate: string;
    transactionAt: string;
    maxRedemption: boolean;
    /** How long before the link a transaction may be dated and still count as after it (partners' clocks drift), ms. */
    clockSkewMs: number;
  }
>;
export type CardLinkCommand = EnsureCardLinked | UnlinkCard | RelinkCard | RedeemCardLink;

/** A transaction already recorded on the link, to recognise its repeats. */
interface RecordedTransaction {
  amount: number;
  at: string;
  maxRedemption: boolean;
}

export interface CardLink {
  opened: boolean;
  partnerId: string | null;
  userId: string | null;
  dealId: string | null;
  terms: CardLinkTerms | null;
  linkedAt: string | null;
  state: 'linked' | 'unlinked' | 'fulfilled';
  /** Qualifying transactions so far, and the incentive they earned, cents. */
  qualifying: number;
  earned: number;
  transactions: ImmutableMap<string, RecordedTransaction>;
}

/** Thrown when the link's stream was never opened (its place exists: the handler opens it and tries again). */
export class CardLinkNotOpened extends NotFound {}

const refuse = (field: string, message: string, resource = 'card_link') =>
  new ValidationFailed([{ type: 'invalid', resource, field, message }]);

/** The link an actor may act on; not found for another partner, or another user's token. */
function owned(link: CardLink, actor: Actor): CardLink {
  if (!link.opened) throw new CardLinkNotOpened(`card link ${actor.cardLinkId} not found`);
  if (link.partnerId !== actor.partnerId || (actor.userId !== undefined && link.userId !== actor.userId))
    throw new NotFound(`card link ${actor.cardLinkId} not found`);
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
  initialState: () => ({
    opened: false,
    partnerId: null,
    userId: null,
    dealId: null,
    terms: null,
    linkedAt: null,
    state: 'linked',
    qualifying: 0,
    earned: 0,
    transactions: ImmutableMap<string, RecordedTransaction>(),
  }),
  decide(command, link, now) {
    switch (command.type) {
      case 'EnsureCardLinked': {
        const { at, ...creation } = command.data;
        if (!link.opened) return [{ type: 'CardLinkOpened', data: creation }];
        return link.state === 'unlinked' ? [{ type: 'CardRelinked', data: { cardLinkId: creation.cardLinkId, at } }] : [];
      }
      case 'UnlinkCard':
      case 'RelinkCard': {
        const { cardLinkId } = command.data;
        const { state } = owned(link, command.data);
        if (state === 'fulfilled') throw refuse('state', 'is fulfilled: a fulfilled card link is neither linked nor unlinked again');
        const wanted = command.type === 'UnlinkCard' ? 'unlinked' : 'linked';
        if (state === wanted) return [];
        const at = now.toISOString();
        return [
          command.type === 'UnlinkCard'
            ? { type: 'CardUnlinked', data: { cardLinkId, at } }
            : { type: 'CardRelinked', data: { cardLinkId, at } },
        ];
      }
      case 'RedeemCardLink': {
        const { cardLinkId, transactionReference, transactionAmount, transactionDate, transactionAt, maxRedemption, clockSkewMs } =
          command.data;
        owned(link, command.data);
        const known = link.transactions.get(transactionReference);
        if (known) {
          if (known.amount === transactionAmount && known.at === transactionAt && known.maxRedemption === maxRedemption) return [];
          throw refuse('transaction_reference', 'was already recorded on this card link with another amount, date or max_redemption');
        }
        if (link.state !== 'linked') throw refuse('state', `is ${link.state}: only a linked card link is redeemed`);
        const at = Date.parse(transactionAt);
        // The date covers its whole last digit (a second without a fraction): any of it within the skew counts.
        const through = at + (xmlDateTimeSpanMs(transactionDate) ?? 1);
        if (through <= Date.parse(link.linkedAt!) - clockSkewMs)
          throw refuse('transaction_date', `is before the card was linked (${link.linkedAt})`);
        if (at > now.getTime() + FUTURE_LEEWAY_MS) throw refuse('transaction_date', 'is in the future');
        const outcome = redemptionOutcome(link.terms!, link, transactionAmount, maxRedemption);
        const redeemedAt = now.toISOString();
        const events: CardLinkEvent[] = [
          {
            type: 'CardLinkRedeemed',
            data: {
              cardLinkId,
              dealId: link.dealId!,
              partnerId: link.partnerId!,
              userId: link.userId!,
              transactionReference,
              transactionAmount,
              transactionDate,
              transactionAt,
              maxRedemption,
              qualifies: outcome.qualifies,
              incentiveCents: outcome.incentiveCents,
              feeCents: outcome.feeCents,
              redeemedAt,
            },
          },
        ];
        if (outcome.fulfils) events.push({ type: 'CardLinkFulfilled', data: { cardLinkId, reason: outcome.fulfils, at: redeemedAt } });
        return events;
      }
    }
  },
  evolve(link, event) {
    switch (event.type) {
      case 'CardLinkOpened': {
        const { partnerId, userId, dealId, terms, linkedAt } = event.data;
        return { ...link, opened: true, partnerId, userId, dealId, terms, linkedAt, state: 'linked' };
      }
      case 'CardUnlinked':
        return { ...link, state: 'unlinked' };
      case 'CardRelinked':
        return { ...link, state: 'linked' };
      case 'CardLinkRedeemed': {
        const { transactionReference, transactionAmount, transactionAt, maxRedemption, qualifies, incentiveCents } = event.data;
        return {
          ...link,
          qualifying: link.qualifying + (qualifies ? 1 : 0),
          earned: link.earned + incentiveCents,
          transactions: link.transactions.set(transactionReference, { amount: transactionAmount, at: transactionAt, maxRedemption }),
        };
      }
      case 'CardLinkFulfilled':
        return { ...link, state: 'fulfilled' };
    }
  },
};
