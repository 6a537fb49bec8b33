import { NotFound } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { SavedDealEvent, savedDealDecider, savedDealId } from './saved-deal.decider';

const now = new Date('2026-06-15T12:00:00Z');
const given = deciderSpec(savedDealDecider);
const data = { savedDealId: 's1', partnerId: 'p1', userId: 'u1', dealId: 'd1' };
const saved: SavedDealEvent = { type: 'DealSaved', data: { ...data, savedAt: 'x' } };
const removed: SavedDealEvent = { type: 'SavedDealRemoved', data: { ...data, removedAt: 'y' } };

describe('saved deal decider', () => {
  it('saves once; saving again changes nothing; saved again after a removal', () => {
    given([])
      .when({ type: 'SaveDeal', data }, now)
      .then([{ type: 'DealSaved', data: { ...data, savedAt: now.toISOString() } }]);
    given([saved]).when({ type: 'SaveDeal', data }, now).then([]);
    given([saved, removed])
      .when({ type: 'SaveDeal', data }, now)
      .then([{ type: 'DealSaved', data: { ...data, savedAt: now.toISOString() } }]);
  });

  it("removes the partner's saved deal, or its token user's; anything else is not found", () => {
    const remove = { savedDealId: 's1', partnerId: 'p1' };
    given([saved])
      .when({ type: 'RemoveSavedDeal', data: remove }, now)
      .then([{ type: 'SavedDealRemoved', data: { ...data, removedAt: now.toISOString() } }]);
    given([saved])
      .when({ type: 'RemoveSavedDeal', data: { ...remove, userId: 'u1' } }, now)
      .then([expect.objectContaining({ type: 'SavedDealRemoved' })] as never);
    given([saved])
      .when({ type: 'RemoveSavedDeal', data: { ...remove, userId: 'u2' } }, now)
      .thenThrows(NotFound);
    given([saved])
      .when({ type: 'RemoveSavedDeal', data: { ...remove, partnerId: 'p2' } }, now)
      .thenThrows(NotFound);
    given([saved, removed]).when({ type: 'RemoveSavedDeal', data: remove }, now).thenThrows(NotFound);
    given([]).when({ type: 'RemoveSavedDeal', data: remove }, now).thenThrows(NotFound);
  });

  it('has one id per partner, user and deal', () => {
    expect(savedDealId('p1', 'u1', 'd1')).toBe(savedDealId('p1', 'u1', 'd1'));
    expect(
      new Set([savedDealId('p1', 'u1', 'd1'), savedDealId('p2', 'u1', 'd1'), savedDealId('p1', 'u2', 'd1'), savedDealId('p1', 'u1', 'd2')])
        .size,
    ).toBe(4);
  });
});
