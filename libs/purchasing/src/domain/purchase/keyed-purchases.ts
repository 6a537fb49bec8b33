import { Decider, DomainCommand, DomainError, DomainEvent, unknownCommand } from '@deals/kernel';

/**
 * The purchases one `Idempotency-Key` started, in the log: the charge of a keyed purchase waits for
 * its entry here, so whatever the idempotency store lost (a power loss), a repeat of the request
 * finds the purchase the key made before buying again.
 */
export const keyedPurchasesStream = (keyId: string) => `keyedpurchases-${keyId}`;

export type KeyedPurchaseStarted = DomainEvent<'KeyedPurchaseStarted', { purchaseId: string; attempt: number }>;
export type StartKeyedPurchase = DomainCommand<'StartKeyedPurchase', { purchaseId: string; attempt: number }>;

/** The key's `attempt`-th purchase was started already (by an earlier run of the request): answer it, buy nothing. */
export class KeyedPurchaseStartedBefore extends DomainError {
  readonly errorType = 'idempotency_key_in_use';
  readonly httpStatus = 409;
  constructor(readonly purchaseIds: string[]) {
    super('this Idempotency-Key started a purchase before');
  }
}

export interface KeyedPurchases {
  purchaseIds: string[];
}

/** The key's purchases have no status: the list only grows, one purchase an attempt of the request. */
export const keyedPurchasesDecider: Decider<KeyedPurchases, StartKeyedPurchase, KeyedPurchaseStarted> = {
  initialState: () => ({ purchaseIds: [] }),
  decide(command, state) {
    switch (command.type) {
      case 'StartKeyedPurchase': {
        const { purchaseId, attempt } = command.data;
        if (state.purchaseIds.includes(purchaseId)) return [];
        if (state.purchaseIds.length !== attempt) throw new KeyedPurchaseStartedBefore(state.purchaseIds);
        return [{ type: 'KeyedPurchaseStarted', data: { purchaseId, attempt } }];
      }
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'KeyedPurchaseStarted':
        return { purchaseIds: [...state.purchaseIds, event.data.purchaseId] };
      default: {
        const unhandled: never = event.type;
        return unhandled;
      }
    }
  },
};
