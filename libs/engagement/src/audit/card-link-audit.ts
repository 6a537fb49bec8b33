import { AttributedEvent, attributedEvent, EventStore, NotFound, RecordedEvent } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { cardLinkDecider, CardLink } from '../domain/card-link/card-link.decider';
import { CardLinkEvent, cardLinkStream, partnerCardLinkageStream } from '../domain/card-link/card-link.events';
import { CardLinkQueries } from '../queries/card-link.queries';

export interface CardLinkAuditEntry extends AttributedEvent {
  /** The link after this event: its state, and what its transactions earned the user and cost the partner so far, refunds' reversals taken off, cents. */
  linkState: string;
  incentiveCents: number;
  feeCents: number;
}

/**
 * Every event of a card link, in log order: its place on the deal's linkage (taken, given back),
 * its own stream (opened, unlinked, relinked, each transaction's phases with what they earned or
 * reversed, fulfilled and its fulfilment reversed),
 * with who caused each and the running totals a settlement sums.
 */
@Injectable()
export class CardLinkAudit {
  constructor(
    private readonly store: EventStore,
    private readonly links: CardLinkQueries,
  ) {}

  async history(cardLinkId: string): Promise<CardLinkAuditEntry[]> {
    const own = await this.store.readStream(cardLinkStream(cardLinkId));
    const made = own.length ? (own[0].data as { dealId: string; partnerId: string }) : await this.links.anyLink(cardLinkId);
    if (!made) throw new NotFound('card link not found');
    // A sandbox's link took its place on the sandbox's own places of the deal.
    const place = (await this.store.readStream(partnerCardLinkageStream(made.dealId, made.partnerId))).filter(
      (e) => (e.data as { cardLinkId?: string }).cardLinkId === cardLinkId,
    );
    const events = [...place, ...own].sort((a, b) => (a.position < b.position ? -1 : 1));
    let link: CardLink = cardLinkDecider.initialState();
    let incentiveCents = 0;
    let feeCents = 0;
    return events.map((event: RecordedEvent) => {
      if (event.streamId === cardLinkStream(cardLinkId)) link = cardLinkDecider.evolve(link, event as unknown as CardLinkEvent);
      if (event.type === 'CardLinkRedeemed' || event.type === 'CardTransactionCleared') {
        const data = event.data as { incentiveCents: number; feeCents: number };
        incentiveCents += data.incentiveCents;
        feeCents += data.feeCents;
      }
      if (event.type === 'CardTransactionRefunded') {
        const data = event.data as { incentiveReversedCents: number; feeReversedCents: number };
        incentiveCents -= data.incentiveReversedCents;
        feeCents -= data.feeReversedCents;
      }
      const linkState =
        event.type === 'CardLinkPlaceReturned'
          ? 'withdrawn'
          : event.type === 'CardLinkPlaceTaken' || link.status === 'unopened'
            ? 'linked'
            : link.status;
      return { ...attributedEvent(event), linkState, incentiveCents, feeCents };
    });
  }
}
