import { AccountQueries } from '@deals/accounts';
import { CatalogQueries, DealDetails, effectiveStateAt } from '@deals/catalog';
import {
  Clock,
  CommandContext,
  EventStore,
  handleCommand,
  handleDatedCommand,
  IdGenerator,
  loadCachedAggregate,
  LogPosition,
  NotFound,
  PartnerCaller,
  ValidationFailed,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  CardLinkCommand,
  cardLinkDecider,
  CardLinkNotOpened,
  CardTransactionPhase,
  TransactionReport,
} from '../domain/card-link/card-link.decider';
import { CardLinkCreation, cardLinkStream, partnerCardLinkageStream } from '../domain/card-link/card-link.events';
import type { CardLinkTerms } from '../domain/card-link/card-link-terms';
import { cardLinkageDecider } from '../domain/card-link/card-linkage.decider';
import { CardLinkQueries } from '../queries/card-link.queries';
import { CardLinkSettings } from './card-link-settings';

/** The later of two log positions (null: nothing appended). */
const later = (a: LogPosition | null, b: LogPosition | null) => (a === null ? b : b === null ? a : a > b ? a : b);

const dealIssue = (field: string, message: string) => new ValidationFailed([{ type: 'invalid', resource: 'card_link', field, message }]);

/** The deal's card-linked terms, as a link records them. */
function termsOf(view: DealDetails): CardLinkTerms {
  const d = view.deal!;
  return {
    minSpend: d.min_spend ?? null,
    incentiveAmount: d.incentive_amount ?? null,
    incentivePercentage: d.incentive_percentage ?? null,
    maximumAllowance: d.maximum_allowance ?? null,
    numQualifying: d.num_qualifying ?? null,
    fixedFee: d.fixed_fee ?? null,
    percentFee: d.percent_fee ?? null,
  };
}

/**
 * POST /card_links: links a live user of the partner to one deal or several. All or
 * nothing: every deal is checked first (known, card-linked, on sale); then a place is taken on each
 * deal's linkage, and if one is refused (its `max_linkage` reached meanwhile) the places this call
 * took are given back before the refusal is answered. A user's existing link is answered (relinked
 * if it was unlinked), never a second one.
 */
export class LinkCards extends Command<{ cardLinkIds: string[]; position: LogPosition | null }> {
  constructor(
    readonly userId: string,
    readonly dealIds: readonly string[],
    /** The request's field that named the deals, for the refusals: `deal_id` or `deal_ids`. */
    readonly field: 'deal_id' | 'deal_ids',
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(LinkCards)
export class LinkCardsHandler implements ICommandHandler<LinkCards> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly catalog: CatalogQueries,
    private readonly accounts: AccountQueries,
  ) {}

  async execute({ userId, dealIds, field, caller }: LinkCards) {
    const now = this.clock.now();
    if (!(await this.accounts.user(caller.partnerId, userId))) throw new NotFound('user not found');
    const deals = await Promise.all(dealIds.map((id) => this.catalog.deal(id)));
    deals.forEach((view, i) => {
      if (!view?.deal) throw new NotFound('deal not found');
      if (view.deal.type !== 'card-linked') throw dealIssue(field, `${dealIds[i]} is not a card-linked deal`);
      if (effectiveStateAt(view.state, view.startAt!, view.endAt!, now.getTime()) !== 'in-flight')
        throw dealIssue(field, `${dealIds[i]} is not on sale`);
    });
    const context: CommandContext = { now, metadata: caller };
    const linkedAt = now.toISOString();
    const links: CardLinkCreation[] = [];
    const taken: CardLinkCreation[] = [];
    let position: LogPosition | null = null;
    try {
      for (const view of deals as DealDetails[]) {
        const deal = view.deal!;
        // A sandbox's links take places of its own on the deal.
        const outcome = await handleCommand(
          this.store,
          partnerCardLinkageStream(deal.id, caller.partnerId),
          cardLinkageDecider,
          {
            type: 'TakeLinkagePlace',
            data: {
              cardLinkId: this.ids.next(),
              dealId: deal.id,
              partnerId: caller.partnerId,
              userId,
              merchantId: deal.merchant_id ?? null,
              terms: termsOf(view),
              linkedAt,
              maxLinkage: deal.max_linkage ?? null,
            },
          },
          context,
        );
        const place = outcome.state.places.get(userId)!;
        // A user of another partner can't hold this user's id: the place is this user's.
        links.push(place);
        if (outcome.events.length) taken.push(place);
        position = later(position, outcome.position);
      }
    } catch (error) {
      for (const place of taken) {
        await handleCommand(
          this.store,
          partnerCardLinkageStream(place.dealId, caller.partnerId),
          cardLinkageDecider,
          { type: 'ReturnLinkagePlace', data: { dealId: place.dealId, cardLinkId: place.cardLinkId, userId } },
          context,
        );
      }
      throw error;
    }
    for (const link of links) {
      const outcome = await handleCommand(
        this.store,
        cardLinkStream(link.cardLinkId),
        cardLinkDecider,
        {
          type: 'EnsureCardLinked',
          data: { ...link, at: linkedAt },
        },
        context,
        { freshStream: taken.includes(link) },
      );
      position = later(position, outcome.position);
    }
    return { cardLinkIds: links.map((l) => l.cardLinkId), position };
  }
}

/**
 * Decides a command on a link's stream. A link whose place was taken but whose stream was never
 * opened (the process stopped in between) is opened first, from its place, and the command decided then.
 */
async function onCardLink(
  store: EventStore,
  queries: CardLinkQueries,
  cardLinkId: string,
  command: CardLinkCommand,
  context: CommandContext,
): Promise<LogPosition | null> {
  // A transaction's line is dated now (see `handleDatedCommand`); a link's move records none.
  const decide = command.type === 'RedeemCardLink' || command.type === 'ReportCardTransaction' ? handleDatedCommand : handleCommand;
  try {
    return (await decide(store, cardLinkStream(cardLinkId), cardLinkDecider, command, context)).position;
  } catch (error) {
    if (!(error instanceof CardLinkNotOpened)) throw error;
    const view = await queries.anyLink(cardLinkId);
    if (!view || view.withdrawn) throw error;
    const linkage = partnerCardLinkageStream(view.dealId, view.partnerId);
    const place = (await loadCachedAggregate(store, linkage, cardLinkageDecider)).state.places.get(view.userId);
    if (place?.cardLinkId !== cardLinkId) throw error;
    await handleCommand(
      store,
      cardLinkStream(cardLinkId),
      cardLinkDecider,
      { type: 'EnsureCardLinked', data: { ...place, at: place.linkedAt } },
      context,
    );
    return (await decide(store, cardLinkStream(cardLinkId), cardLinkDecider, command, context)).position;
  }
}

/** PUT /card_links/:id/unlink and /link. `userId`: the access token's user, who may move only its own links. */
export class MoveCardLink extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly cardLinkId: string,
    readonly to: 'linked' | 'unlinked',
    readonly userId: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(MoveCardLink)
export class MoveCardLinkHandler implements ICommandHandler<MoveCardLink> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly links: CardLinkQueries,
    private readonly accounts: AccountQueries,
  ) {}

  async execute({ cardLinkId, to, userId, caller }: MoveCardLink) {
    // A deleted user's links stay (for the audit) and may be unlinked, never linked again.
    if (to === 'linked') await refuseDeletedUser(this.links, this.accounts, caller.partnerId, cardLinkId);
    const data = { cardLinkId, partnerId: caller.partnerId, userId };
    const command: CardLinkCommand = to === 'linked' ? { type: 'RelinkCard', data } : { type: 'UnlinkCard', data };
    return { position: await onCardLink(this.store, this.links, cardLinkId, command, { now: this.clock.now(), metadata: caller }) };
  }
}

/** A link's user deleted: it earns nothing more and is not linked again. */
async function refuseDeletedUser(links: CardLinkQueries, accounts: AccountQueries, partnerId: string, cardLinkId: string): Promise<void> {
  const view = await links.link(partnerId, cardLinkId);
  if (view && !(await accounts.user(partnerId, view.userId)))
    throw new ValidationFailed([{ type: 'invalid', resource: 'user', field: 'user_id', message: 'is a deleted user' }]);
}

/** What a partner reports of one of the user's card transactions (PUT /card_links/:id/redeem). */
export interface CardTransaction {
  reference: string;
  amountCents: number;
  /** As written, and the instant it names. */
  date: string;
  at: Date;
  maxRedemption: boolean;
  merchant?: string;
}

/** PUT /card_links/:id/redeem. */
export class RedeemCardLinkTransaction extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly cardLinkId: string,
    readonly transaction: CardTransaction,
    readonly userId: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(RedeemCardLinkTransaction)
export class RedeemCardLinkTransactionHandler implements ICommandHandler<RedeemCardLinkTransaction> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly links: CardLinkQueries,
    private readonly accounts: AccountQueries,
    private readonly settings: CardLinkSettings,
  ) {}

  async execute({ cardLinkId, transaction: t, userId, caller }: RedeemCardLinkTransaction) {
    await refuseDeletedUser(this.links, this.accounts, caller.partnerId, cardLinkId);
    const command: CardLinkCommand = {
      type: 'RedeemCardLink',
      data: reportOf(cardLinkId, t.reference, t, userId, caller, this.settings.clockSkewMs),
    };
    return { position: await onCardLink(this.store, this.links, cardLinkId, command, { now: this.clock.now(), metadata: caller }) };
  }
}

/** One phase of a card transaction, as the card network's partner reports it (its reference in the path). */
export type CardTransactionPhaseReport = Omit<CardTransaction, 'reference'> & { phase: CardTransactionPhase };

/** A transaction the partner reported, as the link's commands take it. */
function reportOf(
  cardLinkId: string,
  reference: string,
  t: Omit<CardTransaction, 'reference'>,
  userId: string | undefined,
  caller: PartnerCaller,
  clockSkewMs: number,
): TransactionReport {
  return {
    cardLinkId,
    partnerId: caller.partnerId,
    userId,
    transactionReference: reference,
    transactionAmount: t.amountCents,
    transactionDate: t.date,
    transactionAt: t.at.toISOString(),
    maxRedemption: t.maxRedemption,
    ...(t.merchant === undefined ? {} : { merchant: t.merchant }),
    clockSkewMs,
  };
}

/** PUT /card_links/:card_link_id/transactions/:transaction_reference: one phase of a card transaction. */
export class ReportCardTransactionPhase extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly cardLinkId: string,
    readonly reference: string,
    readonly report: CardTransactionPhaseReport,
    readonly userId: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(ReportCardTransactionPhase)
export class ReportCardTransactionPhaseHandler implements ICommandHandler<ReportCardTransactionPhase> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly links: CardLinkQueries,
    private readonly accounts: AccountQueries,
    private readonly settings: CardLinkSettings,
  ) {}

  async execute({ cardLinkId, reference, report, userId, caller }: ReportCardTransactionPhase) {
    // A deleted user's link earns nothing more; what it earned may still be refunded.
    if (report.phase !== 'refunded') await refuseDeletedUser(this.links, this.accounts, caller.partnerId, cardLinkId);
    const command: CardLinkCommand = {
      type: 'ReportCardTransaction',
      data: { ...reportOf(cardLinkId, reference, report, userId, caller, this.settings.clockSkewMs), phase: report.phase },
    };
    return { position: await onCardLink(this.store, this.links, cardLinkId, command, { now: this.clock.now(), metadata: caller }) };
  }
}
