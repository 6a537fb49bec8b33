import type { AccountQueries } from '@deals/accounts';
import type { CatalogQueries, DealDetails } from '@deals/catalog';
import { ManualClock, sandboxOf, SequentialIdGenerator, ValidationFailed } from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import { CardLinkAudit } from '../audit/card-link-audit';
import { cardLinkageStream } from '../domain/card-link/card-link.events';
import type { CardLinkQueries } from '../queries/card-link.queries';
import { LinkCards, LinkCardsHandler } from './card-link.commands';

const LIVE = '6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40';
const SANDBOX = sandboxOf(LIVE);
const view = {
  _id: 'coffee',
  deal: { id: 'coffee', type: 'card-linked', max_linkage: 1, merchant_id: 'm-1' },
  state: 'in-flight',
  startAt: Date.parse('2026-01-01T00:00:00Z'),
  endAt: Date.parse('2027-01-01T00:00:00Z'),
} as unknown as DealDetails;

describe("a sandbox's card links take places of their own on a card-linked deal", () => {
  const store = new MemoryEventStore();
  const catalog = { deal: async (id: string) => (id === 'coffee' ? view : null) } as unknown as CatalogQueries;
  const accounts = { user: async () => ({}) } as unknown as AccountQueries;
  const handler = new LinkCardsHandler(
    store,
    new ManualClock(new Date('2026-06-15T12:00:00Z')),
    new SequentialIdGenerator('cl'),
    catalog,
    accounts,
  );
  const link = (partnerId: string, userId: string) =>
    handler.execute(new LinkCards(userId, ['coffee'], 'deal_id', { actor: 'partner', partnerId }));

  it("never takes the live deal's places (max_linkage 1: one live link, one sandbox link), and its audit reads its own", async () => {
    const { cardLinkIds } = await link(SANDBOX, 'u-test');
    const live = cardLinkageStream('coffee');
    const sandbox = `${live}~${SANDBOX}`;
    expect((await store.readStream(sandbox)).map((e) => e.type)).toEqual(['CardLinkPlaceTaken']);
    expect(await store.readStream(live)).toEqual([]);

    await link(LIVE, 'u-live');
    expect((await store.readStream(live)).map((e) => e.data)).toEqual([expect.objectContaining({ partnerId: LIVE, userId: 'u-live' })]);
    await expect(link(SANDBOX, 'u-other')).rejects.toBeInstanceOf(ValidationFailed);

    const audit = new CardLinkAudit(store, {} as CardLinkQueries);
    expect((await audit.history(cardLinkIds[0])).map((e) => [e.stream, e.type])).toEqual([
      [sandbox, 'CardLinkPlaceTaken'],
      [`cardlink-${cardLinkIds[0]}`, 'CardLinkOpened'],
    ]);
  });
});
