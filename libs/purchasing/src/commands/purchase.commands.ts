import type { CommandCaller, IdempotentRun, LogPosition } from '@deals/kernel';
import { Command } from '@nestjs/cqrs';

type Caller = CommandCaller & { partnerId: string };
export interface PurchaseOutcome {
  purchaseId: string;
  position: LogPosition | null;
}

/** POST /purchases/reserve: hold units for five minutes (part 3.2). */
export class ReserveUnits extends Command<PurchaseOutcome> {
  constructor(
    readonly dealId: string,
    readonly quantity: number,
    readonly caller: Caller,
    /** The request's run under its `Idempotency-Key`, which names the reservation; null without one. */
    readonly keyed: IdempotentRun | null = null,
  ) {
    super();
  }
}

/** PUT /purchases/:id/claim: the partner took the payment; sell the units to the user. */
export class ClaimReservation extends Command<PurchaseOutcome> {
  constructor(
    readonly purchaseId: string,
    readonly userId: string,
    readonly caller: Caller,
  ) {
    super();
  }
}

/** PUT /purchases/:id/release: the payment failed; give the units back. */
export class ReleaseReservation extends Command<PurchaseOutcome> {
  constructor(
    readonly purchaseId: string,
    readonly caller: Caller,
  ) {
    super();
  }
}

/** The scheduled release of a hold past its expiry (a no-op when it was sold or released). */
export class ReleaseExpiredHold extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly dealId: string,
    readonly holdId: string,
  ) {
    super();
  }
}
