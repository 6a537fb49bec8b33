import {
  AlreadyCharging,
  CannotFulfil,
  Clock,
  Declined,
  EventStore,
  fold,
  IdempotencyKeyInUse,
  IdempotentRun,
  loadAggregate,
  LogPosition,
  orderedTimeText,
  PaymentFailed,
  PaymentGateway,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { CHARGE_LOCK_MS } from '../../domain/charge-lock/charge-lock';
import { keyedPurchasesDecider, keyedPurchasesStream } from '../../domain/purchase/keyed-purchases';
import { Purchase, purchaseDecider } from '../../domain/purchase/purchase.decider';
import { PurchaseEvent, purchaseStream } from '../../domain/purchase/purchase.events';
import { RecoverInterruptedPayments } from '../../reactions/recover-interrupted-payments.reaction';
import { refundKey } from './purchase-steps';

/**
 * The id a purchase is to take (and, for a keyed one, its place among the key's purchases), or the
 * purchase a keyed request made before (its outcome to answer again).
 */
export type KeyedPurchase =
  { resumed: false; purchaseId: string; attempt: number | null } | { resumed: true; purchaseId: string; position: LogPosition | null };

/** How many purchases one key may start, each stopped before any charge. */
const ATTEMPTS = 100;

/**
 * The purchases of requests sent with an `Idempotency-Key`. Each is entered in the key's stream in
 * the log (`keyedpurchases-<key id>`) with the same commit as its charge lock and hold, before any
 * charge; its id comes from the key's run (its start and random id). A run resumed (its process died
 * before answering, or its answer was not kept), or a new run whose entry is refused (the store
 * lost its claim), answers the purchases the key started instead of buying again: settled first
 * if open and its charge answered or its charge lock over (until then: 409 idempotency_key_in_use
 * with Retry-After), and skipped if stopped before any charge (the next buys).
 */
@Injectable()
export class KeyedPurchases {
  constructor(
    private readonly store: EventStore,
    private readonly gateway: PaymentGateway,
    private readonly recovery: RecoverInterruptedPayments,
    private readonly clock: Clock,
  ) {}

  /** A card purchase's id and place, or the outcome of the one the key made before. */
  async card(run: IdempotentRun | null, newId: () => string): Promise<KeyedPurchase> {
    if (run === null) return { resumed: false, purchaseId: newId(), attempt: null };
    if (!run.resumed) return { resumed: false, purchaseId: keyedPurchaseId(run, 0), attempt: 0 };
    const { state } = await loadAggregate(this.store, keyedPurchasesStream(run.keyId), keyedPurchasesDecider);
    return this.resume(run, state.purchaseIds);
  }

  /**
   * The outcome of the key's purchases `started` (in order), or when each stopped before any charge,
   * the id and place of the next.
   */
  async resume(run: IdempotentRun, started: string[]): Promise<KeyedPurchase> {
    for (const purchaseId of started) {
      const outcome = await this.outcome(purchaseId, run.ended);
      if (outcome !== null) return outcome;
    }
    // A purchase of the run without its entry never reached its charge: its id is only skipped.
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const purchaseId = keyedPurchaseId(run, attempt);
      if (started.includes(purchaseId)) continue;
      if ((await this.purchase(purchaseId)).purchase.status === 'none') return { resumed: false, purchaseId, attempt: started.length };
    }
    throw new PaymentFailed(`this Idempotency-Key has started ${ATTEMPTS} purchases already; use a new key`);
  }

  /**
   * A started purchase's outcome to answer, or null when it stopped before any charge. `ended`: the
   * run that started it released the key, so no charge of it is under way.
   */
  private async outcome(purchaseId: string, ended: boolean): Promise<KeyedPurchase | null> {
    const found = await this.purchase(purchaseId);
    let purchase = found.purchase;
    if (purchase.status === 'none') return null;
    if (purchase.status === 'reserved') {
      // Its charge may still be under way in a process that died until its lock ends, unless the
      // processor has answered it or the run that started it ended (answered and released the
      // key: its charge, if it sent one, was answered); then settled from the processor's record
      // as the recovery would.
      const lockEnds = found.reservedAt + CHARGE_LOCK_MS;
      if (lockEnds > this.clock.now().getTime() && !ended && (await this.gateway.chargeOutcome(purchaseId)) === null)
        throw underWay(purchaseId, lockEnds - this.clock.now().getTime());
      await this.recovery.settleNow(purchaseId);
      purchase = (await this.purchase(purchaseId)).purchase;
      if (purchase.status === 'reserved') throw underWay(purchaseId, 1000);
    }
    if (purchase.status === 'fulfilled') return { resumed: true, purchaseId, position: await this.store.head() };
    if (purchase.status === 'declined') throw new Declined('the card was declined');
    const charge = await this.gateway.chargeOutcome(purchaseId);
    if (charge === null) return null;
    if (charge.status === 'approved' && (await this.gateway.refundOutcome(refundKey(purchaseId)))?.status === 'refunded')
      throw new CannotFulfil('the units sold out while the card was charged; the charge was refunded');
    throw new PaymentFailed('the payment processor failed; nothing was charged');
  }

  /**
   * The refusal to answer a keyed run: `already_charging` from a purchase of the same key (one an
   * earlier run of this request started, whose charge may still complete) is no refusal but an
   * outcome not known yet.
   */
  refusal(run: IdempotentRun | null, error: Error): Error {
    if (run === null || !(error instanceof AlreadyCharging) || error.holder === null) return error;
    if (!sameRun(run, error.holder)) return error;
    return underWay(error.holder, (error.until ?? 0) - this.clock.now().getTime());
  }

  /** A reservation's id, or the one a resumed run made (answered as it is now). */
  async reservation(run: IdempotentRun | null, newId: () => string): Promise<KeyedPurchase> {
    if (run === null) return { resumed: false, purchaseId: newId(), attempt: null };
    const purchaseId = keyedPurchaseId(run, 0);
    if (!run.resumed || (await this.purchase(purchaseId)).purchase.status === 'none') return { resumed: false, purchaseId, attempt: null };
    return { resumed: true, purchaseId, position: await this.store.head() };
  }

  /** The purchase's state, and when it was reserved (ms). */
  private async purchase(purchaseId: string): Promise<{ purchase: Purchase; reservedAt: number }> {
    const events = (await this.store.readStream(purchaseStream(purchaseId))) as unknown as PurchaseEvent[];
    const first = events[0];
    const reservedAt = first?.type === 'PurchaseReserved' ? Date.parse(first.data.reservedAt) : 0;
    return { purchase: fold(purchaseDecider, events), reservedAt };
  }
}

/** The answer while a keyed purchase's outcome is not known: ask again once its charge lock ends, or in a second. */
const underWay = (purchaseId: string, retryAfterMs: number) =>
  new IdempotencyKeyInUse(
    // eslint-disable-next-line no-restricted-syntax -- the id the service gave the purchase
    `purchase ${purchaseId} of this Idempotency-Key is still being charged: its outcome is not known yet; send the request again after Retry-After`,
    retryAfterMs,
  );

/** Whether `purchaseId` is one of the purchases `run` names (any attempt): the same time and run. */
function sameRun(run: IdempotentRun, purchaseId: string): boolean {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) if (keyedPurchaseId(run, attempt) === purchaseId) return true;
  return false;
}

/**
 * The id of a keyed run's purchase, in a short id's form (19 characters, the first 7 the time, so
 * that it sorts with the others and keeps the log's and views' indexes growing at one end): the
 * run's start, then its random id (72 bits, as a short id's), or for a later try a hash of both.
 */
export function keyedPurchaseId({ startedAt, runId }: IdempotentRun, attempt: number): string {
  const rest = attempt === 0 ? runId : createHash('sha256').update(`${runId}\0${attempt}`).digest('base64url').slice(0, 12);
  return `${orderedTimeText(startedAt)}${rest}`;
}
