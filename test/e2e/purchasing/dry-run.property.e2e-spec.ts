import { ManualClock } from '@deals/kernel';
import fc from 'fast-check';
import { Reply, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { writtenState } from '../../support/written-state';

/**
 * For random deals (stock, price, per-user limit), holds, purchases, cards and users: a dry run's
 * verdict is the verdict of the same purchase made right after it (same status, same body; on
 * success, the purchase it said), and a dry run writes nothing (the log, every view, the kept keys).
 * The cards approve: a processor's decline is what a dry run does not foresee. A full purchase
 * here names a user that exists (a refusal after making a user names its new id, which a dry run
 * cannot know).
 */

/** Each purchase call's dry run. */
const DRY_RUN_OF: Record<string, string> = {
  '/purchases': '/purchases/dry_run',
  '/v1/purchases/full.json': '/v1/purchases/full/dry_run.json',
};

type Who = 0 | 1 | 'unknown';
type Step =
  | { kind: 'buy'; user: Who; card: 'own' | 'soon' | 'other' | 'unknown'; quantity: number; rightPrice: boolean; knownDeal: boolean }
  | { kind: 'full'; user: 0 | 1 | 'email'; card: 'own' | 'entered' | 'entered-expired'; quantity: number }
  | { kind: 'reserve'; quantity: number }
  | { kind: 'advance'; ms: number };

const DAY = 24 * 3600_000;
const quantity = fc.integer({ min: 1, max: 5 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('buy' as const),
      user: fc.constantFrom<Who>(0, 0, 1, 'unknown'),
      card: fc.constantFrom('own' as const, 'own' as const, 'soon' as const, 'other' as const, 'unknown' as const),
      quantity,
      rightPrice: fc.constantFrom(true, true, true, false),
      knownDeal: fc.constantFrom(true, true, true, true, true, false),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('full' as const),
      user: fc.constantFrom(0 as const, 1 as const, 'email' as const),
      card: fc.constantFrom('own' as const, 'entered' as const, 'entered-expired' as const),
      quantity,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reserve' as const), quantity }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(60_000, 4 * 60_000, 6 * 60_000, 35 * DAY) }),
  },
);
const deal = fc.record({
  stock: fc.integer({ min: 1, max: 8 }),
  price: fc.constantFrom(100, 4900),
  limit: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
});

describe('a dry run answers what the purchase made right after it answers, and writes nothing', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let run = 0;
  const seen = new Set<string>();

  beforeAll(async () => {
    api = await TestApi.start({ clock, env: { SLOW_CARD_MS: '0' } });
    apiKey = (await api.createPartner('Property dry runner')).apiKey;
    await api.importRegions([chicago]);
  });
  afterAll(() => api?.close());

  const call = (path: string, body: unknown) => api.call('POST', path, { apiKey, body });
  const verdict = (reply: Reply) => ({ status: reply.status, body: reply.body });

  it('for random deals, holds, purchases, cards and users', async () => {
    await fc.assert(
      fc.asyncProperty(deal, fc.array(step, { minLength: 1, maxLength: 8 }), async (terms, steps) => {
        const n = ++run;
        const dealId = `dry-property-${n}`;
        await api.importDeals([
          {
            ...spaDay,
            id: dealId,
            quantity: terms.stock,
            current_price: terms.price,
            max_per_user: terms.limit,
            end_at: '2031-01-01T00:00:00Z',
            expires_at: '2031-06-01T00:00:00Z',
          },
        ]);
        const now = clock.now();
        const users: string[] = [];
        const cards: string[] = [];
        for (const who of [0, 1]) {
          const email = `dry-${n}-${who}@example.com`;
          users.push((await call('/users', { email })).body.user_id);
          const card = { user_id: users[who], verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
          cards.push((await call('/credit_cards', { ...card, number: '4242424242424242' })).body.credit_card_id);
        }
        // A card valid to the end of this month: past its expiry once the clock moves a month on.
        const soon = (
          await call('/credit_cards', {
            user_id: users[0],
            number: '5555555555554444',
            verification_value: '123',
            month: now.getUTCMonth() + 1,
            year: now.getUTCFullYear(),
            zip_code: '60601',
          })
        ).body.credit_card_id;
        const entered = (expired: boolean) => ({
          number: '4242424242424242',
          verification_value: '123',
          month: '01',
          year: String(clock.now().getUTCFullYear() + (expired ? -1 : 2)),
          zip_code: '60601',
        });
        const log: string[] = [`deal ${JSON.stringify(terms)}`];

        const request = (s: Extract<Step, { kind: 'buy' | 'full' }>): [string, Record<string, unknown>] => {
          if (s.kind === 'buy') {
            const user = s.user === 'unknown' ? 'nobody' : users[s.user];
            const card = { own: cards[s.user === 1 ? 1 : 0], soon, other: cards[s.user === 1 ? 0 : 1], unknown: 'no-card' }[s.card];
            return [
              '/purchases',
              {
                deal_id: s.knownDeal ? dealId : 'no-such-deal',
                quantity: s.quantity,
                user_id: user,
                credit_card_id: card,
                expected_price_per_unit: s.rightPrice ? terms.price : terms.price + 1,
              },
            ];
          }
          const buyer = s.user === 'email' ? { user: { email: `dry-${n}-0@example.com` } } : { user_id: users[s.user] };
          const owner = s.user === 1 ? 1 : 0;
          const card = s.card === 'own' ? { credit_card_id: cards[owner] } : { credit_card: entered(s.card === 'entered-expired') };
          return ['/v1/purchases/full.json', { deal_id: dealId, quantity: s.quantity, ...buyer, ...card }];
        };

        for (const s of steps) {
          if (s.kind === 'advance') {
            clock.advance(s.ms);
            log.push(`advance ${s.ms}`);
            continue;
          }
          if (s.kind === 'reserve') {
            const reply = await call('/purchases/reserve', { deal_id: dealId, num_bought: s.quantity });
            log.push(`reserve ${s.quantity} -> ${reply.status}`);
            continue;
          }
          const [path, body] = request(s);
          const before = await writtenState(api);
          const dry = await call(DRY_RUN_OF[path], body);
          const where = `${log.join('\n')}\n${path} ${JSON.stringify(body)} dry -> ${dry.status} ${JSON.stringify(dry.body)}`;
          expect({ where, written: await writtenState(api) }).toEqual({ where, written: before });
          const real = await call(path, body);
          seen.add(`${s.kind} ${dry.status} ${dry.status === 200 ? '' : dry.body.error_type}`);
          log.push(`${path} ${JSON.stringify(body)} -> ${real.status}`);
          if (dry.status !== 200) {
            expect({ where, verdict: verdict(real) }).toEqual({ where, verdict: verdict(dry) });
            continue;
          }
          expect({ where, status: real.status }).toEqual({ where, status: 200 });
          const { deal_type, deal_id, price, amount, number_bought, user_id, credit_card_id, deal: summary } = real.body.purchase;
          const made = { deal_type, deal_id, price, amount, number_bought, user_id, credit_card_id, deal: summary };
          // A card entered is stored by the purchase: its id is known only then.
          const foreseen = { ...dry.body.purchase, credit_card_id: dry.body.purchase.credit_card_id ?? credit_card_id };
          expect({ where, purchase: made }).toEqual({ where, purchase: foreseen });
          await api.settle();
          const left = (await api.call('GET', `/deals/${dealId}`, { apiKey })).body.deal.num_left;
          expect({ where, left }).toEqual({ where, left: dry.body.availability.num_left - number_bought });
        }
      }),
      { numRuns: 25 },
    );
    // The runs met successes and each kind of refusal, of both calls.
    for (const verdict of [
      'buy 200 ',
      'buy 404 find_failed',
      'buy 422 validation_failed',
      'buy 422 cannot_fufill',
      'full 200 ',
      'full 422 validation_failed',
      'full 422 cannot_fufill',
    ])
      expect([...seen]).toContain(verdict);
  }, 300_000);
});
