import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { CardLinkNotOpened, cardLinkDecider } from './card-link.decider';
import type { CardLinkCreation, CardLinkEvent } from './card-link.events';
import { CardLinkTerms, redemptionOutcome } from './card-link-terms';
import { cardLinkageDecider } from './card-linkage.decider';

const terms: CardLinkTerms = {
  minSpend: 2000,
  incentiveAmount: 500,
  incentivePercentage: null,
  maximumAllowance: 1200,
  numQualifying: 3,
  fixedFee: 25,
  percentFee: 10,
};
const creation: CardLinkCreation = {
  cardLinkId: 'l1',
  dealId: 'coffee',
  partnerId: 'p1',
  userId: 'u1',
  merchantId: 'bean',
  terms,
  linkedAt: '2026-06-15T12:00:00.000Z',
};
const now = new Date('2026-06-16T12:00:00Z');
const opened: CardLinkEvent = { type: 'CardLinkOpened', data: creation };
const given = deciderSpec(cardLinkDecider);
const actor = { cardLinkId: 'l1', partnerId: 'p1' };
const tx = (reference: string, amount: number, maxRedemption = false, date = '2026-06-16T09:30:00', clockSkewMs = 0) => ({
  type: 'RedeemCardLink' as const,
  data: {
    ...actor,
    transactionReference: reference,
    transactionAmount: amount,
    transactionDate: date,
    transactionAt: new Date(`${date}Z`).toISOString(),
    maxRedemption,
    clockSkewMs,
  },
});
const redeemed = (
  reference: string,
  amount: number,
  qualifies: boolean,
  incentiveCents: number,
  feeCents: number,
  maxRedemption = false,
) => ({
  type: 'CardLinkRedeemed' as const,
  data: {
    cardLinkId: 'l1',
    dealId: 'coffee',
    partnerId: 'p1',
    userId: 'u1',
    transactionReference: reference,
    transactionAmount: amount,
    transactionDate: '2026-06-16T09:30:00',
    transactionAt: '2026-06-16T09:30:00.000Z',
    maxRedemption,
    qualifies,
    incentiveCents,
    feeCents,
    redeemedAt: now.toISOString(),
  },
});

describe('card link decider', () => {
  it('opens a link, and relinks it when it was unlinked; a linked or fulfilled link stays', () => {
    given([])
      .when({ type: 'EnsureCardLinked', data: { ...creation, at: 'x' } }, now)
      .then([opened]);
    given([opened])
      .when({ type: 'EnsureCardLinked', data: { ...creation, at: 'x' } }, now)
      .then([]);
    given([opened, { type: 'CardUnlinked', data: { cardLinkId: 'l1', at: 'a' } }])
      .when({ type: 'EnsureCardLinked', data: { ...creation, at: 'x' } }, now)
      .then([{ type: 'CardRelinked', data: { cardLinkId: 'l1', at: 'x' } }]);
    given([opened, { type: 'CardLinkFulfilled', data: { cardLinkId: 'l1', reason: 'max_redemption', at: 'a' } }])
      .when({ type: 'EnsureCardLinked', data: { ...creation, at: 'x' } }, now)
      .then([]);
  });

  it('moves linked → unlinked → linked, idempotently; a fulfilled link moves no more', () => {
    const at = now.toISOString();
    given([opened])
      .when({ type: 'UnlinkCard', data: actor }, now)
      .then([{ type: 'CardUnlinked', data: { cardLinkId: 'l1', at } }]);
    given([opened]).when({ type: 'RelinkCard', data: actor }, now).then([]);
    const unlinked: CardLinkEvent = { type: 'CardUnlinked', data: { cardLinkId: 'l1', at } };
    given([opened, unlinked]).when({ type: 'UnlinkCard', data: actor }, now).then([]);
    given([opened, unlinked])
      .when({ type: 'RelinkCard', data: actor }, now)
      .then([{ type: 'CardRelinked', data: { cardLinkId: 'l1', at } }]);
    const fulfilled: CardLinkEvent = { type: 'CardLinkFulfilled', data: { cardLinkId: 'l1', reason: 'max_redemption', at } };
    for (const type of ['UnlinkCard', 'RelinkCard'] as const)
      given([opened, fulfilled])
        .when({ type, data: actor }, now)
        .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'state' })] });
  });

  it("is not found for another partner, another user's token, or before it is opened", () => {
    given([opened])
      .when({ type: 'UnlinkCard', data: { ...actor, partnerId: 'p2' } }, now)
      .thenThrows(NotFound);
    given([opened])
      .when({ type: 'UnlinkCard', data: { ...actor, userId: 'u2' } }, now)
      .thenThrows(NotFound);
    given([opened])
      .when({ type: 'UnlinkCard', data: { ...actor, userId: 'u1' } }, now)
      .then([expect.objectContaining({ type: 'CardUnlinked' })] as never);
    given([]).when(tx('t1', 3000), now).thenThrows(CardLinkNotOpened);
  });

  it('records a qualifying transaction with its incentive and fee', () => {
    given([opened])
      .when(tx('t1', 3000), now)
      .then([redeemed('t1', 3000, true, 500, 25 + 300)]);
  });

  it('records a transaction below min_spend as not qualifying: it earns nothing and costs no fee', () => {
    given([opened])
      .when(tx('t1', 1999), now)
      .then([redeemed('t1', 1999, false, 0, 0)]);
  });

  it('is fulfilled by max_redemption, even by a transaction that does not qualify', () => {
    given([opened])
      .when(tx('t1', 100, true), now)
      .then([
        redeemed('t1', 100, false, 0, 0, true),
        {
          type: 'CardLinkFulfilled',
          data: { cardLinkId: 'l1', reason: 'max_redemption', at: now.toISOString(), transactionReference: 't1' },
        },
      ]);
  });

  it('is fulfilled by its num_qualifying-th qualifying transaction, and the allowance caps what the link earns in all', () => {
    const history = [opened, redeemed('t1', 3000, true, 500, 325), redeemed('t2', 100, false, 0, 0), redeemed('t3', 5000, true, 500, 525)];
    // 1200 allowed, 1000 earned: the third earns 200, and fulfils the link.
    given(history)
      .when(tx('t4', 2500), now)
      .then([
        redeemed('t4', 2500, true, 200, 275),
        {
          type: 'CardLinkFulfilled',
          data: { cardLinkId: 'l1', reason: 'num_qualifying', at: now.toISOString(), transactionReference: 't4' },
        },
      ]);
  });

  it('records a transaction reference once: a repeat changes nothing, a repeat with other facts is refused', () => {
    const history = [opened, redeemed('t1', 3000, true, 500, 325)];
    given(history).when(tx('t1', 3000), now).then([]);
    given(history)
      .when(tx('t1', 3001), now)
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'transaction_reference' })] });
    // Also once the link is fulfilled by it.
    const fulfilled = [
      ...history,
      { type: 'CardLinkFulfilled', data: { cardLinkId: 'l1', reason: 'num_qualifying', at: 'a' } } as CardLinkEvent,
    ];
    given(fulfilled).when(tx('t1', 3000), now).then([]);
  });

  it('redeems from linked only', () => {
    given([opened, { type: 'CardUnlinked', data: { cardLinkId: 'l1', at: 'a' } }])
      .when(tx('t1', 3000), now)
      .thenThrows(ValidationFailed, {
        issues: [expect.objectContaining({ field: 'state', message: expect.stringContaining('unlinked') })],
      });
    given([opened, { type: 'CardLinkFulfilled', data: { cardLinkId: 'l1', reason: 'max_redemption', at: 'a' } }])
      .when(tx('t9', 3000), now)
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'state' })] });
  });

  it('refuses a transaction dated before the link, or more than a day ahead', () => {
    given([opened])
      .when(tx('t1', 3000, false, '2026-06-15T11:59:59'), now)
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'transaction_date' })] });
    given([opened])
      .when(tx('t1', 3000, false, '2026-06-17T12:00:01'), now)
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'transaction_date' })] });
  });

  describe('a transaction dated about when the card was linked (partners’ clocks drift)', () => {
    const SKEW_MS = 300_000;
    const linkedWithMillis: CardLinkEvent = { type: 'CardLinkOpened', data: { ...creation, linkedAt: '2026-06-15T12:00:00.750Z' } };
    const recorded = [expect.objectContaining({ type: 'CardLinkRedeemed' })] as never;
    const beforeTheLink = { issues: [expect.objectContaining({ field: 'transaction_date', message: expect.stringContaining('before') })] };

    it('counts a date without a fraction in the second of the link as after it, even with no skew allowed', () => {
      given([linkedWithMillis])
        .when(tx('t1', 3000, false, '2026-06-15T12:00:00', 0), now)
        .then(recorded);
      given([linkedWithMillis])
        .when(tx('t1', 3000, false, '2026-06-15T12:00:00', SKEW_MS), now)
        .then(recorded);
    });

    it('compares a date with a fraction at the precision it was written in', () => {
      given([linkedWithMillis])
        .when(tx('t1', 3000, false, '2026-06-15T12:00:00.7', 0), now)
        .then(recorded);
      given([linkedWithMillis])
        .when(tx('t1', 3000, false, '2026-06-15T12:00:00.5', 0), now)
        .thenThrows(ValidationFailed, beforeTheLink);
    });

    it('counts a date 299 s before the link as after it, with the skew of 300 s', () => {
      given([linkedWithMillis])
        .when(tx('t1', 3000, false, '2026-06-15T11:55:01', SKEW_MS), now)
        .then(recorded);
    });

    it('refuses a date 301 s before the link', () => {
      given([linkedWithMillis])
        .when(tx('t1', 3000, false, '2026-06-15T11:54:59', SKEW_MS), now)
        .thenThrows(ValidationFailed, beforeTheLink);
    });
  });
});

describe('redemption arithmetic', () => {
  const none: CardLinkTerms = {
    minSpend: null,
    incentiveAmount: null,
    incentivePercentage: null,
    maximumAllowance: null,
    numQualifying: null,
    fixedFee: null,
    percentFee: null,
  };
  const fresh = { earned: 0, qualifying: 0 };
  it('takes a percentage of the amount, rounded down, when no flat amount is given', () => {
    expect(redemptionOutcome({ ...none, incentivePercentage: 15 }, fresh, 1999, false)).toEqual({
      qualifies: true,
      incentiveCents: 299,
      feeCents: 0,
      fulfils: null,
    });
  });
  it('prefers the flat amount to the percentage', () => {
    expect(redemptionOutcome({ ...none, incentiveAmount: 700, incentivePercentage: 50 }, fresh, 10_000, false).incentiveCents).toBe(700);
  });
  it('caps by what is left of maximum_allowance, never below 0', () => {
    expect(
      redemptionOutcome({ ...none, incentiveAmount: 700, maximumAllowance: 1000 }, { earned: 600, qualifying: 1 }, 1, false).incentiveCents,
    ).toBe(400);
    expect(
      redemptionOutcome({ ...none, incentiveAmount: 700, maximumAllowance: 1000 }, { earned: 1000, qualifying: 2 }, 1, false)
        .incentiveCents,
    ).toBe(0);
  });
  it('charges fixed_fee plus percent_fee of the amount, rounded down, on a qualifying transaction', () => {
    expect(redemptionOutcome({ ...none, fixedFee: 30, percentFee: 3 }, fresh, 3333, false).feeCents).toBe(30 + 99);
  });
  it('without num_qualifying, is fulfilled by max_redemption only', () => {
    expect(redemptionOutcome(none, { earned: 0, qualifying: 99 }, 1, false).fulfils).toBeNull();
    expect(redemptionOutcome(none, fresh, 1, true).fulfils).toBe('max_redemption');
  });
});

describe('card linkage decider: max_linkage places', () => {
  const linkage = deciderSpec(cardLinkageDecider);
  const take = (userId: string, cardLinkId: string, maxLinkage: number | null = 2) => ({
    type: 'TakeLinkagePlace' as const,
    data: { ...creation, userId, cardLinkId, maxLinkage },
  });
  const taken = (userId: string, cardLinkId: string) => ({
    type: 'CardLinkPlaceTaken' as const,
    data: { ...creation, userId, cardLinkId },
  });

  it('gives each user one place, up to max_linkage', () => {
    linkage([])
      .when(take('u1', 'l1'))
      .then([taken('u1', 'l1')]);
    linkage([taken('u1', 'l1')])
      .when(take('u1', 'l9'))
      .then([]);
    linkage([taken('u1', 'l1'), taken('u2', 'l2')])
      .when(take('u3', 'l3'))
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'deal_id' })] });
    linkage([taken('u1', 'l1'), taken('u2', 'l2')])
      .when(take('u3', 'l3', null))
      .then([taken('u3', 'l3')]);
  });

  it('takes back a place its call gave up, and only that link’s', () => {
    const history = [taken('u1', 'l1'), taken('u2', 'l2')];
    linkage(history)
      .when({ type: 'ReturnLinkagePlace', data: { dealId: 'coffee', cardLinkId: 'l2', userId: 'u2' } })
      .then([{ type: 'CardLinkPlaceReturned', data: { dealId: 'coffee', cardLinkId: 'l2', userId: 'u2' } }]);
    linkage(history)
      .when({ type: 'ReturnLinkagePlace', data: { dealId: 'coffee', cardLinkId: 'l9', userId: 'u2' } })
      .then([]);
    linkage([...history, { type: 'CardLinkPlaceReturned', data: { dealId: 'coffee', cardLinkId: 'l2', userId: 'u2' } }])
      .when(take('u3', 'l3'))
      .then([taken('u3', 'l3')]);
  });
});

describe('card transactions in phases', () => {
  const at = now.toISOString();
  const facts = (reference: string, amount: number) => ({
    cardLinkId: 'l1',
    dealId: 'coffee',
    partnerId: 'p1',
    userId: 'u1',
    transactionReference: reference,
    transactionAmount: amount,
    transactionDate: '2026-06-16T09:30:00',
    transactionAt: '2026-06-16T09:30:00.000Z',
  });
  const report = (phase: 'authorised' | 'cleared' | 'refunded', reference: string, amount: number, maxRedemption = false) => ({
    type: 'ReportCardTransaction' as const,
    data: {
      ...actor,
      phase,
      transactionReference: reference,
      transactionAmount: amount,
      transactionDate: '2026-06-16T09:30:00',
      transactionAt: '2026-06-16T09:30:00.000Z',
      maxRedemption,
      clockSkewMs: 0,
    },
  });
  const authorised = (reference: string, amount: number): CardLinkEvent => ({
    type: 'CardTransactionAuthorised',
    data: { ...facts(reference, amount), authorisedAt: at },
  });
  const cleared = (
    reference: string,
    amount: number,
    qualifies: boolean,
    incentiveCents: number,
    feeCents: number,
    maxRedemption = false,
  ): CardLinkEvent => ({
    type: 'CardTransactionCleared',
    data: { ...facts(reference, amount), maxRedemption, qualifies, incentiveCents, feeCents, clearedAt: at },
  });
  const refunded = (
    reference: string,
    amount: number,
    qualifies: boolean,
    qualifyingLost: boolean,
    incentiveReversedCents: number,
    feeReversedCents: number,
  ): CardLinkEvent => ({
    type: 'CardTransactionRefunded',
    data: { ...facts(reference, amount), qualifies, qualifyingLost, incentiveReversedCents, feeReversedCents, refundedAt: at },
  });
  const fulfilled = (reason: 'max_redemption' | 'num_qualifying', reference: string): CardLinkEvent => ({
    type: 'CardLinkFulfilled',
    data: { cardLinkId: 'l1', reason, at, transactionReference: reference },
  });
  const reversed = (
    reason: 'max_redemption' | 'num_qualifying',
    reference: string,
    state: 'linked' | 'unlinked' = 'linked',
  ): CardLinkEvent => ({
    type: 'CardLinkFulfilmentReversed',
    data: { cardLinkId: 'l1', transactionReference: reference, reason, state, at },
  });

  it('records an authorisation and credits nothing; the clearing credits the incentive and fee on the cleared amount', () => {
    given([opened])
      .when(report('authorised', 't1', 3000), now)
      .then([authorised('t1', 3000)]);
    // The cleared amount may differ from the authorised one (a tip): it is what earns.
    given([opened, authorised('t1', 3000)])
      .when(report('cleared', 't1', 3500), now)
      .then([cleared('t1', 3500, true, 500, 375)]);
    // Cleared without an authorisation seen first: as a redemption.
    given([opened])
      .when(report('cleared', 't1', 3000), now)
      .then([cleared('t1', 3000, true, 500, 325)]);
  });

  it('clears a transaction authorised while linked though the link was unlinked since; a new one needs the link linked', () => {
    const unlinked: CardLinkEvent = { type: 'CardUnlinked', data: { cardLinkId: 'l1', at } };
    given([opened, authorised('t1', 3000), unlinked])
      .when(report('cleared', 't1', 3000), now)
      .then([cleared('t1', 3000, true, 500, 325)]);
    given([opened, unlinked])
      .when(report('cleared', 't2', 3000), now)
      .thenThrows(ValidationFailed, { message: /state is unlinked/ });
    given([opened, unlinked])
      .when(report('authorised', 't2', 3000), now)
      .thenThrows(ValidationFailed, { message: /state is unlinked/ });
  });

  it('records each phase once: a repeat changes nothing, another amount is refused, an earlier phase arriving late changes nothing', () => {
    const history = [opened, authorised('t1', 3000), cleared('t1', 3000, true, 500, 325)];
    given(history)
      .when(report('cleared', 't1', 3000), now)
      .then([]);
    given(history)
      .when(report('authorised', 't1', 9999), now)
      .then([]);
    given(history)
      .when(report('cleared', 't1', 2900), now)
      .thenThrows(ValidationFailed, { message: /transaction_amount differs from the cleared amount already recorded for t1 \(3000\)/ });
    given([...history, refunded('t1', 3000, false, true, 500, 325)])
      .when(report('cleared', 't1', 3000), now)
      .then([]);
  });

  it('reverses the whole incentive and fee on a full refund, and the transaction no longer counts', () =>
    given([opened, cleared('t1', 3000, true, 500, 325)])
      .when(report('refunded', 't1', 3000), now)
      .then([refunded('t1', 3000, false, true, 500, 325)]));

  it('keeps on a partial refund what the amount left earns: a fixed incentive stays above min_spend, the fee shrinks', () => {
    // 3000 cleared, 500 back: 2500 kept, still >= 2000; the fee 25 + 10% of 2500 = 275 (was 325).
    given([opened, cleared('t1', 3000, true, 500, 325)])
      .when(report('refunded', 't1', 500), now)
      .then([refunded('t1', 500, true, false, 0, 50)]);
    // 1500 back: 1500 kept, below min_spend: nothing kept.
    given([opened, cleared('t1', 3000, true, 500, 325)])
      .when(report('refunded', 't1', 1500), now)
      .then([refunded('t1', 1500, false, true, 500, 325)]);
  });

  it('scales a percentage incentive down with a partial refund, never above what was earned', () => {
    const percent: CardLinkEvent = {
      type: 'CardLinkOpened',
      data: { ...creation, terms: { ...terms, incentiveAmount: null, incentivePercentage: 10 } },
    };
    given([percent, cleared('t1', 4000, true, 400, 425)])
      .when(report('refunded', 't1', 1000), now)
      .then([refunded('t1', 1000, true, false, 100, 100)]);
  });

  it('voids an authorisation refunded before clearing: nothing was earned, nothing reversed', () =>
    given([opened, authorised('t1', 3000)])
      .when(report('refunded', 't1', 3000), now)
      .then([refunded('t1', 3000, false, false, 0, 0)]));

  it('refuses a refund above the amount cleared, or of a transaction never reported; a refund is recorded once', () => {
    given([opened, cleared('t1', 3000, true, 500, 325)])
      .when(report('refunded', 't1', 3001), now)
      .thenThrows(ValidationFailed, { message: /is more than the cleared amount of t1 \(3000\)/ });
    given([opened])
      .when(report('refunded', 't9', 100), now)
      .thenThrows(ValidationFailed, { message: /t9|never authorised or cleared/ });
    const done = [opened, cleared('t1', 3000, true, 500, 325), refunded('t1', 3000, false, true, 500, 325)];
    given(done)
      .when(report('refunded', 't1', 3000), now)
      .then([]);
    given(done)
      .when(report('refunded', 't1', 100), now)
      .thenThrows(ValidationFailed, { message: /differs from the refunded amount/ });
  });

  it('refunds a redemption recorded by PUT /card_links/:id/redeem as a cleared transaction', () =>
    given([opened, redeemed('t1', 3000, true, 500, 325)])
      .when(report('refunded', 't1', 3000), now)
      .then([refunded('t1', 3000, false, true, 500, 325)]));

  it('links a fulfilled link again when the refund takes away what fulfilled it: its max_redemption transaction, or a qualifying one short of num_qualifying', () => {
    given([opened, cleared('t1', 3000, true, 500, 325, true), fulfilled('max_redemption', 't1')])
      .when(report('refunded', 't1', 3000), now)
      .then([refunded('t1', 3000, false, true, 500, 325), reversed('max_redemption', 't1')]);
    // A partial refund of the max_redemption transaction leaves the link fulfilled.
    given([opened, cleared('t1', 3000, true, 500, 325, true), fulfilled('max_redemption', 't1')])
      .when(report('refunded', 't1', 100), now)
      .then([refunded('t1', 100, true, false, 0, 10)]);
    const three = [
      opened,
      cleared('t1', 3000, true, 500, 325),
      cleared('t2', 3000, true, 500, 325),
      cleared('t3', 3000, true, 200, 325),
      fulfilled('num_qualifying', 't3'),
    ];
    given(three)
      .when(report('refunded', 't1', 3000), now)
      .then([refunded('t1', 3000, false, true, 500, 325), reversed('num_qualifying', 't1')]);
    // Linked again, what was reversed is allowance to earn again: 1200 - 700 = 500 left.
    given([...three, refunded('t1', 3000, false, true, 500, 325), reversed('num_qualifying', 't1')])
      .when(report('cleared', 't4', 3000), now)
      .then([cleared('t4', 3000, true, 500, 325), fulfilled('num_qualifying', 't4')]);
  });

  it('puts the link back as it was before its fulfilment: unlinked when a transaction authorised earlier cleared while it was', () => {
    const unlinked: CardLinkEvent = { type: 'CardUnlinked', data: { cardLinkId: 'l1', at } };
    given([opened, authorised('t1', 3000), unlinked])
      .when(report('cleared', 't1', 3000, true), now)
      .then([cleared('t1', 3000, true, 500, 325, true), fulfilled('max_redemption', 't1')]);
    given([opened, authorised('t1', 3000), unlinked, cleared('t1', 3000, true, 500, 325, true), fulfilled('max_redemption', 't1')])
      .when(report('refunded', 't1', 3000), now)
      .then([refunded('t1', 3000, false, true, 500, 325), reversed('max_redemption', 't1', 'unlinked')]);
  });

  it('keeps a max_redemption fulfilment whose link reached num_qualifying all the same', () =>
    given([
      opened,
      authorised('t2', 3000),
      authorised('t3', 3000),
      authorised('t4', 3000),
      cleared('t1', 100, false, 0, 0, true),
      fulfilled('max_redemption', 't1'),
      cleared('t2', 3000, true, 500, 325),
      cleared('t3', 3000, true, 500, 325),
      cleared('t4', 3000, true, 200, 325),
    ])
      .when(report('refunded', 't1', 100), now)
      .then([refunded('t1', 100, false, false, 0, 0)]));

  it('clears a transaction reported authorised when PUT /card_links/:id/redeem records it', () =>
    given([opened, authorised('t1', 3000)])
      .when(tx('t1', 3200), now)
      .then([cleared('t1', 3200, true, 500, 345)]));

  it('voids an authorisation whole only: a part of it is refused', () =>
    given([opened, authorised('t1', 3000)])
      .when(report('refunded', 't1', 1000), now)
      .thenThrows(ValidationFailed, { message: /voids the authorisation of t1 whole: give its amount \(3000\)/ }));
});
