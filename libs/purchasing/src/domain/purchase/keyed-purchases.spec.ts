import { deciderSpec } from '@deals/testing';
import { KeyedPurchaseStartedBefore, keyedPurchasesDecider } from './keyed-purchases';

const given = deciderSpec(keyedPurchasesDecider);
const t0 = new Date('2026-06-15T12:00:00Z');
const started = (purchaseId: string, attempt: number) => ({ type: 'KeyedPurchaseStarted' as const, data: { purchaseId, attempt } });
const start = (purchaseId: string, attempt: number) => ({ type: 'StartKeyedPurchase' as const, data: { purchaseId, attempt } });

describe("a key's purchases", () => {
  it('enters the first purchase of a key, and the next one in its place', () => {
    given([])
      .when(start('p1', 0), t0)
      .then([started('p1', 0)]);
    given([started('p1', 0)])
      .when(start('p2', 1), t0)
      .then([started('p2', 1)]);
  });
  it('refuses a purchase in a place taken (a run that does not know of the earlier one)', () => {
    given([started('p1', 0)])
      .when(start('p9', 0), t0)
      .thenThrows(KeyedPurchaseStartedBefore);
  });
  it('enters a purchase once, however often it is started', () =>
    given([started('p1', 0)])
      .when(start('p1', 0), t0)
      .then([]));
});
