import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import {
  Clock,
  EventStore,
  handleCommand,
  IdGenerator,
  laterPosition,
  loadAggregate,
  LogPosition,
  NotFound,
  OPERATOR,
  Scheduler,
  ValidationFailed,
} from '@deals/kernel';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { inventoryDecider } from '../domain/inventory/inventory.decider';
import { buyerKey, holdExpiry, inventoryStream } from '../domain/inventory/inventory.events';
import { notAReservation, purchaseDecider } from '../domain/purchase/purchase.decider';
import { dealSnapshot, purchaseStream } from '../domain/purchase/purchase.events';
import { ClaimReservation, ReleaseExpiredHold, ReleaseReservation, ReserveUnits } from './purchase.commands';
import { CouponIssuer } from './coupon-issuer';
import { KeyedPurchases } from './keyed-purchases';
import { armHoldRelease, disarmHoldRelease } from './release-hold-job';
import { refuseExpiredVouchers, refuseOverLimit, refuseUnchargeableAmount, refuseUnsellable, SOLD_TYPES } from './sale-rules';

@CommandHandler(ReserveUnits)
export class ReserveUnitsHandler implements ICommandHandler<ReserveUnits> {
  constructor(
    private readonly store: EventStore,
    private readonly catalog: CatalogQueries,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly keyed: KeyedPurchases,
  ) {}

  async execute({ dealId, quantity, caller, keyed: run }: ReserveUnits) {
    const keyed = run === null ? null : await this.keyed.reservation(run, () => this.ids.short());
    if (keyed?.resumed) return { purchaseId: keyed.purchaseId, position: keyed.position };
    const now = this.clock.now();
    const view = await this.catalog.deal(dealId);
    if (!view) throw new NotFound(`deal ${dealId} not found`);
    const deal = view.deal!;
    refuseUnsellable(view, now.getTime(), SOLD_TYPES);
    refuseOverLimit(view, quantity);
    refuseUnchargeableAmount(view, quantity, 'num_bought');
    const purchaseId = keyed?.purchaseId ?? this.ids.short();
    const context = { now, metadata: caller };
    // The reservation is on disk before its hold, so a crash never leaves a hold nobody owns (a
    // reservation without its hold is claimed on fresh units, or released, like a lapsed one).
    const reserved = await handleCommand(
      this.store,
      purchaseStream(purchaseId),
      purchaseDecider,
      {
        type: 'ReservePurchase',
        data: {
          purchaseId,
          partnerId: caller.partnerId,
          deal: dealSnapshot(deal),
          quantity,
          holdId: purchaseId,
          reservedAt: now.toISOString(),
          holdExpiresAt: new Date(holdExpiry(now.getTime())).toISOString(),
        },
      },
      context,
      { freshStream: true },
    );
    let held;
    try {
      held = await handleCommand(
        this.store,
        inventoryStream(deal.id),
        inventoryDecider,
        { type: 'HoldUnits', data: { dealId: deal.id, holdId: purchaseId, quantity } },
        context,
      );
    } catch (error) {
      await handleCommand(
        this.store,
        purchaseStream(purchaseId),
        purchaseDecider,
        { type: 'ReleasePurchase', data: { purchaseId, partnerId: caller.partnerId } },
        context,
      );
      throw error;
    }
    const holdExpiresAt = (held.events[0].data as { expiresAt: string }).expiresAt;
    // Timeliness only: an expired hold stops counting whether or not its job runs.
    await armHoldRelease(this.scheduler, deal.id, purchaseId, holdExpiresAt);
    return { purchaseId, position: laterPosition(held.position, reserved.position) };
  }
}

/**
 * Claim: the partner took the payment; the shared tail sells the units (on a fresh hold when the
 * reservation lapsed or was released, which fails if the deal sold out) and issues the coupons.
 */
@CommandHandler(ClaimReservation)
export class ClaimReservationHandler implements ICommandHandler<ClaimReservation> {
  constructor(
    private readonly store: EventStore,
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly coupons: CouponIssuer,
    private readonly clock: Clock,
  ) {}

  async execute({ purchaseId, userId, caller }: ClaimReservation) {
    const { state: purchase } = await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider);
    if (purchase.status === 'none' || purchase.partnerId !== caller.partnerId) throw new NotFound(`purchase ${purchaseId} not found`);
    // Checked before anything is sold: a card purchase or a resale completes on its own path.
    const refusal = notAReservation(purchase);
    if (refusal) throw refusal;
    if (!(await this.accounts.user(caller.partnerId, userId))) throw new NotFound(`user ${userId} not found`);
    if (purchase.status === 'fulfilled' && purchase.userId !== userId) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'purchase', field: 'id', message: 'is already claimed by another user' }]);
    }
    // The reserve knew no user, so the sale counts the claim against the deal's per-user limit
    // (its current terms: the purchase's snapshot keeps none). A repeated claim by its own user is
    // the same sale again, already counted, so it stays idempotent; a refused claim writes nothing.
    const view = await this.catalog.deal(purchase.dealId!);
    // Vouchers that have expired could never be redeemed: not sold, even on a live hold (a claim
    // already made is answered again as it was).
    if (purchase.status !== 'fulfilled' && view) refuseExpiredVouchers(view, this.clock.now().getTime());
    const maxPerUser = view?.deal?.max_per_user;
    return this.coupons.complete(
      purchaseId,
      caller,
      (holdId) => ({ type: 'ClaimPurchase', data: { purchaseId, partnerId: caller.partnerId, userId, holdId } }),
      { buyer: buyerKey(caller.partnerId, userId), maxPerBuyer: maxPerUser },
    );
  }
}

@CommandHandler(ReleaseReservation)
export class ReleaseReservationHandler implements ICommandHandler<ReleaseReservation> {
  constructor(
    private readonly store: EventStore,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
  ) {}

  /**
   * The units go back first, then the purchase is marked released: a claim running at the same
   * time has either sold them already (the release is refused, and the claim answers fulfilled) or
   * finds them released (it buys fresh units, part 3.2, and this release is then refused as claimed).
   * A release is never answered while the claim keeps its units.
   */
  async execute({ purchaseId, caller }: ReleaseReservation) {
    const context = { now: this.clock.now(), metadata: caller };
    const { state: before } = await loadAggregate(this.store, purchaseStream(purchaseId), purchaseDecider);
    if (before.status === 'none' || before.partnerId !== caller.partnerId) throw new NotFound(`purchase ${purchaseId} not found`);
    const refusal = notAReservation(before);
    if (refusal) throw refusal;
    let inventory: { position: LogPosition | null } = { position: null };
    if (before.status === 'reserved' || before.status === 'released') {
      const dealId = before.dealId!;
      inventory = await handleCommand(
        this.store,
        inventoryStream(dealId),
        inventoryDecider,
        { type: 'ReleaseHold', data: { dealId, holdId: before.holdId!, reason: 'released' } },
        context,
      );
    }
    const released = await handleCommand(
      this.store,
      purchaseStream(purchaseId),
      purchaseDecider,
      { type: 'ReleasePurchase', data: { purchaseId, partnerId: caller.partnerId } },
      context,
    );
    await disarmHoldRelease(this.scheduler, purchaseId);
    return { purchaseId, position: laterPosition(released.position, inventory.position) };
  }
}

@CommandHandler(ReleaseExpiredHold)
export class ReleaseExpiredHoldHandler implements ICommandHandler<ReleaseExpiredHold> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  /** `liveUntil`: the hold's expiry (epoch ms) when it is still open and live, so nothing was released. */
  async execute({ dealId, holdId }: ReleaseExpiredHold): Promise<{ position: LogPosition | null; liveUntil: number | null }> {
    const now = this.clock.now();
    const { position, state } = await handleCommand(
      this.store,
      inventoryStream(dealId),
      inventoryDecider,
      { type: 'ReleaseExpiredHold', data: { dealId, holdId } },
      {
        now,
        metadata: { ...OPERATOR, actor: 'system' },
      },
    );
    const open = state.holds.get(holdId);
    return { position, liveUntil: open && open.expiresAt > now.getTime() ? open.expiresAt : null };
  }
}
