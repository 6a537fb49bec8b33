import { AlreadyCharging } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { chargeLockDecider } from './charge-lock';

const given = deciderSpec(chargeLockDecider);
const t0 = new Date('2026-06-15T12:00:00Z');
const begun = (purchaseId: string, at = t0) => ({ type: 'ChargeBegun' as const, data: { userId: 'u1', purchaseId, at: at.toISOString() } });
const begin = (purchaseId: string) => ({ type: 'BeginCharge' as const, data: { userId: 'u1', purchaseId } });
const end = (purchaseId: string) => ({ type: 'EndCharge' as const, data: { userId: 'u1', purchaseId } });

describe('charge lock decider', () => {
  it('begins a charge when none is running, and ends it', () => {
    given([])
      .when(begin('p1'), t0)
      .then([begun('p1')]);
    given([begun('p1')])
      .when(end('p1'), t0)
      .then([{ type: 'ChargeEnded', data: { userId: 'u1', purchaseId: 'p1' } }]);
  });
  it('refuses a second charge while one runs, but not after the lock lapsed', () => {
    given([begun('p1')])
      .when(begin('p2'), new Date(t0.getTime() + 1000))
      .thenThrows(AlreadyCharging);
    given([begun('p1')])
      .when(begin('p2'), new Date(t0.getTime() + 121_000))
      .then([begun('p2', new Date(t0.getTime() + 121_000))]);
  });
  it("does not end another purchase's charge", () =>
    given([begun('p1')])
      .when(end('p2'), t0)
      .then([]));
});
