import { AlreadyCharging, fold } from '@deals/kernel';
import fc from 'fast-check';
import { deciderSpec } from '@deals/testing';
import { ChargeLock, chargeLockDecider, chargeLockSnapshots } from './charge-lock';

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

describe('charge lock snapshots', () => {
  const events = fc.array(
    fc
      .tuple(fc.boolean(), fc.constantFrom('p1', 'p2', 'p3'), fc.integer({ min: 0, max: 1e9 }))
      .map(([begins, purchaseId, ms]) =>
        begins ? begun(purchaseId, new Date(t0.getTime() + ms)) : { type: 'ChargeEnded' as const, data: { userId: 'u1', purchaseId } },
      ),
    { maxLength: 30 },
  );
  it('decides every command alike from a snapshot taken at any point of a history as from its whole fold', () =>
    fc.assert(
      fc.property(events, fc.nat(), fc.constantFrom('p1', 'p2', 'p4'), fc.boolean(), (history, cut, purchaseId, begins) => {
        const at = history.length ? cut % (history.length + 1) : 0;
        const whole = fold(chargeLockDecider, history);
        const fromSnapshot = history
          .slice(at)
          .reduce(
            chargeLockDecider.evolve,
            chargeLockSnapshots.fromJson(
              JSON.parse(JSON.stringify(chargeLockSnapshots.toJson(fold(chargeLockDecider, history.slice(0, at))))),
            ),
          );
        expect(fromSnapshot).toEqual(whole);
        const command = begins ? begin(purchaseId) : end(purchaseId);
        const decide = (state: ChargeLock) => {
          try {
            return chargeLockDecider.decide(command, state, new Date(t0.getTime() + 1e9 + 60_000));
          } catch (error) {
            return (error as Error).constructor.name;
          }
        };
        expect(decide(fromSnapshot)).toEqual(decide(whole));
      }),
    ));
});
