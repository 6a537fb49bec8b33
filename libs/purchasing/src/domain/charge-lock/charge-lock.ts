import { AlreadyCharging, DomainCommand, DomainEvent, SnapshotCodec, SnapshottedDecider, unknownCommand } from '@deals/kernel';

export type ChargeBegun = DomainEvent<'ChargeBegun', { userId: string; purchaseId: string; at: string }>;
/** `saleFollows`: the charge was approved and its sale is recorded next (a statement's day waits for it). */
export type ChargeEnded = DomainEvent<'ChargeEnded', { userId: string; purchaseId: string; saleFollows?: true }>;
export type BeginCharge = DomainCommand<'BeginCharge', { userId: string; purchaseId: string }>;
export type EndCharge = DomainCommand<'EndCharge', { userId: string; purchaseId: string; saleFollows?: boolean }>;

/** A charge left open by a crash stops blocking the user after this long. */
export const CHARGE_LOCK_MS = 2 * 60 * 1000;

/**
 * One charge at a time per user (409 `already_charging`): a stream per user, appended with
 * the expected revision, so the rule holds across processes too.
 */
export const chargeLockStream = (userId: string) => `usercharge-${userId}`;

/** A user's lock: free, or held by the charge of `purchaseId` begun at `since` (ms since the epoch). */
export type ChargeLock = { status: 'free' } | { status: 'charging'; purchaseId: string; since: number };

/** A lock as its snapshots keep it: a free one with no purchase and `since` 0. */
interface ChargeLockJson {
  purchaseId: string | null;
  since: number;
}

/**
 * A user's lock stream grows by two events a purchase, for as long as the user buys; its state is
 * the last charge, so a snapshot is a few bytes and a restart reads at most `every` of its events.
 */
export const chargeLockSnapshots: SnapshotCodec<ChargeLock> = {
  shape: 'usercharge/1',
  every: 200,
  toJson: (lock): ChargeLockJson =>
    lock.status === 'charging' ? { purchaseId: lock.purchaseId, since: lock.since } : { purchaseId: null, since: 0 },
  fromJson: (json) => {
    const { purchaseId, since } = json as ChargeLockJson;
    return purchaseId === null ? { status: 'free' } : { status: 'charging', purchaseId, since };
  },
};

export const chargeLockDecider: SnapshottedDecider<ChargeLock, BeginCharge | EndCharge, ChargeBegun | ChargeEnded> = {
  snapshot: chargeLockSnapshots,
  initialState: () => ({ status: 'free' }),
  decide(command, lock, now) {
    const { userId, purchaseId } = command.data;
    switch (command.type) {
      case 'BeginCharge':
        if (lock.status === 'charging' && lock.purchaseId !== purchaseId && now.getTime() - lock.since < CHARGE_LOCK_MS)
          throw new AlreadyCharging(
            'an earlier purchase of this user is still being charged',
            lock.purchaseId,
            lock.since + CHARGE_LOCK_MS,
          );
        return [{ type: 'ChargeBegun', data: { userId, purchaseId, at: now.toISOString() } }];
      case 'EndCharge': {
        if (lock.status !== 'charging' || lock.purchaseId !== purchaseId) return [];
        return [{ type: 'ChargeEnded', data: { userId, purchaseId, ...(command.data.saleFollows ? { saleFollows: true as const } : {}) } }];
      }
      default:
        return unknownCommand(command);
    }
  },
  evolve(_lock, event) {
    switch (event.type) {
      case 'ChargeBegun':
        return { status: 'charging', purchaseId: event.data.purchaseId, since: Date.parse(event.data.at) };
      case 'ChargeEnded':
        return { status: 'free' };
      default: {
        const unhandled: never = event;
        return unhandled;
      }
    }
  },
};
