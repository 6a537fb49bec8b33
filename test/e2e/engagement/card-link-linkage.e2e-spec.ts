import { RegisterUser } from '@deals/accounts';
import { EventStore, ManualClock, ViewDocument, ViewStore } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import fc from 'fast-check';
import { Reply, TestApi } from '../../support/api-harness';
import { cardLinked, chicago } from '../../support/catalogue-fixtures';

/** The deal's linkage stream folded here, independently of the service's decider: user → link. */
function places(events: { type: string; data: unknown }[]): Map<string, string> {
  const held = new Map<string, string>();
  for (const { type, data } of events) {
    const d = data as { userId: string; cardLinkId: string };
    if (type === 'CardLinkPlaceTaken') held.set(d.userId, d.cardLinkId);
    else if (type === 'CardLinkPlaceReturned' && held.get(d.userId) === d.cardLinkId) held.delete(d.userId);
  }
  return held;
}

/** One step; the steps of a batch run at once. `user` and `pick` choose among the users and the links made so far. */
type Action =
  | { kind: 'link'; user: number; both: boolean }
  | { kind: 'unlink' | 'relink'; pick: number }
  | { kind: 'redeem'; pick: number; amount: number; reference: number; max: boolean };

const USERS = 8;
const MAX_LINKAGE = 3;
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('link' as const), user: fc.nat({ max: USERS - 1 }), both: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('unlink' as const, 'relink' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('redeem' as const),
      pick: fc.nat(),
      amount: fc.integer({ min: 1, max: 6000 }),
      reference: fc.nat({ max: 4 }),
      max: fc.boolean(),
    }),
  },
);
const scenario = fc.array(fc.array(action, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 });
/** One step at a time: a link unlinked and relinked, redeemed to its end, then refused each move, and the places filled. */
const EVERY_ANSWER: Action[][] = [
  [{ kind: 'link', user: 0, both: false }],
  [{ kind: 'unlink', pick: 0 }],
  [{ kind: 'relink', pick: 0 }],
  [{ kind: 'redeem', pick: 0, amount: 5000, reference: 0, max: true }],
  [{ kind: 'redeem', pick: 0, amount: 5000, reference: 1, max: false }],
  [{ kind: 'unlink', pick: 0 }],
  [{ kind: 'relink', pick: 0 }],
  [{ kind: 'link', user: 1, both: false }],
  [{ kind: 'link', user: 2, both: false }],
  [{ kind: 'link', user: 3, both: false }],
];
const EXPECTED: Record<Action['kind'], number[]> = { link: [200, 422], unlink: [200, 422], relink: [200, 422], redeem: [200, 422] };

describe('card link linkage (max_linkage) under concurrency and interleavings', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let partnerId: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    ({ apiKey, partnerId } = await api.createPartner());
    await api.importRegions([chicago]);
  });
  afterAll(() => api?.close());

  /** Users made at once through the command bus, as POST /users makes them: the links are what is tested here, not that call. */
  const newUsers = async (n: number) => {
    const caller = { partnerId, actor: `partner:${partnerId}` };
    const register = async () => {
      const email = `linker-${Math.random().toString(36).slice(2)}@example.com`;
      return (await api.get(CommandBus).execute(new RegisterUser({ profile: { email }, sessionId: null }, true, caller))).userId;
    };
    const ids = await Promise.all(Array.from({ length: n }, register));
    await api.settle();
    return ids;
  };

  // 300 links asked at once: a ceiling of its own, for a loaded machine.
  it('gives exactly max_linkage links to 300 users linking at once; the views and the log agree', async () => {
    await api.importDeals([{ ...cardLinked, id: 'hot-card-linked', max_linkage: 50 }]);
    const users = await newUsers(300);
    const replies = await Promise.all(
      users.map((user_id) => api.call('POST', '/card_links', { apiKey, body: { user_id, deal_id: 'hot-card-linked' } })),
    );
    const linked = replies.filter((r) => r.status === 200);
    expect(linked).toHaveLength(50);
    expect(replies.filter((r) => r.status === 422)).toHaveLength(250);
    for (const r of replies.filter((r) => r.status === 422))
      expect(r.body.errors[0]).toMatchObject({ resource: 'card_link', field: 'deal_id' });
    await api.settle();
    const log = places(await api.get(EventStore).readStream('cardlinkage-hot-card-linked'));
    expect(log.size).toBe(50);
    const views = await api
      .get(ViewStore)
      .find<ViewDocument & { userId: string }>('card_link_details', { dealId: 'hot-card-linked', withdrawn: false });
    expect(new Map(views.map((v) => [v.userId, v._id]))).toEqual(log);
    expect(new Set(linked.map((r) => r.body.card_link.id))).toEqual(new Set(log.values()));
    // Every link's own stream was opened.
    for (const id of log.values()) expect((await api.get(EventStore).readStream(`cardlink-${id}`))[0].type).toBe('CardLinkOpened');
  }, 180_000);

  it('keeps the users holding places within max_linkage, and each link’s record equal to its events, whatever the interleaving', async () => {
    const users = await newUsers(USERS);
    let run = 0;
    // What the runs did, to know the property was exercised (every kind answered 200 and 422 at least once).
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(scenario, async (batches) => {
        const dealId = `linkage-${++run}`;
        const pairId = `linkage-pair-${run}`;
        await api.importDeals([
          { ...cardLinked, id: dealId, max_linkage: MAX_LINKAGE, num_qualifying: 3, maximum_allowance: 1200 },
          { ...cardLinked, id: pairId, max_linkage: MAX_LINKAGE + 1 },
        ]);
        const links: string[] = [];
        const trace: string[] = [];
        const step = async (a: Action) => {
          let reply: Reply;
          if (a.kind === 'link') {
            const body = a.both ? { user_id: users[a.user], deal_ids: [pairId, dealId] } : { user_id: users[a.user], deal_id: dealId };
            reply = await api.call('POST', '/card_links', { apiKey, body });
            if (reply.status === 200)
              for (const l of reply.body.card_links ?? [reply.body.card_link]) if (!links.includes(l.id)) links.push(l.id);
          } else {
            if (!links.length) return;
            const id = links[a.pick % links.length];
            reply =
              a.kind === 'redeem'
                ? await api.call('PUT', `/card_links/${id}/redeem`, {
                    apiKey,
                    body: {
                      transaction_reference: `r${a.reference}`,
                      transaction_amount: a.amount,
                      transaction_date: '2026-06-15T12:00:00Z',
                      max_redemption: a.max,
                    },
                  })
                : await api.call('PUT', `/card_links/${id}/${a.kind === 'relink' ? 'link' : 'unlink'}`, { apiKey });
          }
          trace.push(`${JSON.stringify(a)} -> ${reply.status}`);
          seen.add(`${a.kind} ${reply.status}`);
          if (!EXPECTED[a.kind].includes(reply.status))
            throw new Error(`unexpected ${reply.status}: ${JSON.stringify(reply.body)}\n${trace.join('\n')}`);
        };
        for (const batch of batches) await Promise.all(batch.map(step));
        await api.settle();
        const store = api.get(EventStore);
        for (const [deal, max] of [
          [dealId, MAX_LINKAGE],
          [pairId, MAX_LINKAGE + 1],
        ] as const) {
          const held = places(await store.readStream(`cardlinkage-${deal}`));
          expect(held.size).toBeLessThanOrEqual(max);
          const views = await api
            .get(ViewStore)
            .find<ViewDocument & { userId: string }>('card_link_details', { dealId: deal, withdrawn: false });
          expect(new Map(views.map((v) => [v.userId, v._id]))).toEqual(held);
        }
        for (const id of links) {
          const events = await store.readStream(`cardlink-${id}`);
          const view = (await api.get(ViewStore).findById<any>('card_link_details', id))!;
          let state = 'linked';
          let earned = 0;
          const references = new Set<string>();
          for (const e of events) {
            const d = e.data as { transactionReference: string; incentiveCents: number };
            if (e.type === 'CardUnlinked') state = 'unlinked';
            if (e.type === 'CardRelinked') state = 'linked';
            if (e.type === 'CardLinkFulfilled') state = 'fulfilled';
            if (e.type === 'CardLinkRedeemed') {
              expect(references.has(d.transactionReference)).toBe(false);
              references.add(d.transactionReference);
              earned += d.incentiveCents;
            }
          }
          if (!view.withdrawn) expect(view.state).toBe(state);
          expect(view.incentiveCents).toBe(earned);
          if (view.dealId === dealId) expect(earned).toBeLessThanOrEqual(1200);
        }
      }),
      // First, one run that meets every answer whatever the draws: the check below must not hang on luck.
      { numRuns: 25, examples: [[EVERY_ANSWER]] },
    );
    expect([...seen].sort()).toEqual([
      'link 200',
      'link 422',
      'redeem 200',
      'redeem 422',
      'relink 200',
      'relink 422',
      'unlink 200',
      'unlink 422',
    ]);
  });
});
