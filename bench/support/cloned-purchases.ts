/**
 * A long history made fast: one real purchase's events (the template) appended again and again
 * through the event store port with fresh ids, so that the log is shaped exactly as the service
 * writes it (the `history` and `rebuild` benches).
 */
import { appendToStream, EventStore, NewEvent, RecordedEvent } from '@deals/kernel';
import { randomUUID } from 'node:crypto';

/** The share of copies sold on the hot deal; the rest spread over the other deals. */
const HOT_SHARE = 0.7;

export interface PurchaseTemplate {
  /** The purchase's events (its card's left out: a stored card is written once). */
  events: RecordedEvent[];
  purchaseId: string;
  userId: string;
  cardId: string;
  chargeId: string;
  hotDeal: string;
  otherDeals: string[];
  /** Users with a stored card each, the copies' buyers in turn. */
  buyers: Array<{ userId: string; cardId: string }>;
}

/**
 * Appends `count` copies of the template purchase (copy numbers from `first`; fresh purchase,
 * charge, coupon code and event ids, one buyer of the template's in turn, {@link HOT_SHARE} of them
 * on the hot deal), 200 appends at a time; the hot deal's sales in one append of its stream.
 */
export async function appendClones(
  store: EventStore,
  template: PurchaseTemplate,
  first: number,
  count: number,
): Promise<{ clones: number; events: number }> {
  const appends: Array<{ stream: string; events: NewEvent[] }> = [];
  const hotSales: NewEvent[] = [];
  for (let n = first; n < first + count; n++) {
    const buyer = template.buyers[n % template.buyers.length];
    const onHot = n % 10 < HOT_SHARE * 10;
    const deal = onHot ? template.hotDeal : template.otherDeals[n % template.otherDeals.length];
    const purchaseId = `hist${n.toString(36)}${randomUUID().slice(0, 8)}`;
    const code = String(1_000_000_000_000 + n);
    const replace = (text: string) =>
      text
        .split(template.purchaseId)
        .join(purchaseId)
        .split(template.userId)
        .join(buyer.userId)
        .split(template.cardId)
        .join(buyer.cardId)
        .split(template.chargeId)
        .join(`ch_hist${n}`)
        .split(template.hotDeal)
        .join(deal)
        .replace(/"barcode":"[^"]*"/, `"barcode":"${code}"`)
        .replace(/"redemptionCode":"[^"]*"/, `"redemptionCode":"R${code}"`);
    const byStream = new Map<string, NewEvent[]>();
    for (const event of template.events) {
      const stream = replace(event.streamId);
      const copy: NewEvent = {
        id: randomUUID(),
        type: event.type,
        data: JSON.parse(replace(JSON.stringify(event.data))),
        metadata: event.metadata,
      };
      if (stream.startsWith('inventory-') && onHot) hotSales.push(copy);
      else byStream.set(stream, [...(byStream.get(stream) ?? []), copy]);
    }
    for (const [stream, events] of byStream) appends.push({ stream, events });
  }
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < appends.length; i = next++) await appendToStream(store, appends[i].stream, appends[i].events, 'any');
  };
  await Promise.all([...Array.from({ length: 200 }, worker), appendToStream(store, `inventory-${template.hotDeal}`, hotSales, 'any')]);
  return { clones: count, events: count * template.events.length };
}
