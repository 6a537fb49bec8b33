import { CatalogQueries } from '@deals/catalog';
import {
  CannotFulfil,
  Clock,
  CommandCaller,
  CommandContext,
  EventStore,
  fold,
  handleCommand,
  laterPosition,
  LogPosition,
  Scheduler,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { couponDecider } from '../domain/coupon/coupon.decider';
import { couponStream } from '../domain/coupon/coupon.events';
import { ForBuyer, inventoryDecider, OverPerUserLimit } from '../domain/inventory/inventory.decider';
import { inventoryStream, replacementHoldId } from '../domain/inventory/inventory.events';
import { ClaimPurchase, purchaseDecider, RecordPayment, RecordResale } from '../domain/purchase/purchase.decider';
import { couponIdsFor, DealSnapshot, PurchaseEvent, purchaseStream } from '../domain/purchase/purchase.events';
import { CouponQr } from '../coupon-images/coupon-qr';
import { CouponCodeKey, CouponCodes, couponCodes } from './coupon-codes';
import { disarmHoldRelease } from './release-hold-job';
import { refuseOffSale } from './sale-rules';

/**
 * When a coupon issued at `now` expires: `expiration_days` after it (part 2.3: "if set, days after
 * which a voucher expires"), but never after the deal's `expires_at`; either alone when only one is
 * set; null when neither is.
 */
export function couponExpiry(deal: Pick<DealSnapshot, 'expiresAt' | 'expirationDays'>, now: Date): string | null {
  const byDays = deal.expirationDays ? now.getTime() + deal.expirationDays * 86_400_000 : null;
  const byDate = deal.expiresAt ? Date.parse(deal.expiresAt) : null;
  if (byDays === null) return deal.expiresAt ?? null;
  return byDate !== null && byDate <= byDays ? deal.expiresAt : new Date(byDays).toISOString();
}

/** A command context whose caller is a partner (the coupons record which one). */
type PartnerContext = CommandContext & { metadata: CommandCaller & { partnerId: string } };

/**
 * The tail every purchase shares once it is paid for: sell the held units (on a fresh hold when
 * the first lapsed or was released, which fails if the deal sold out meanwhile), record the sale on
 * the purchase, and issue one coupon per unit. Every step is idempotent (coupon ids derive from the
 * purchase), so running it again after a crash completes what the first run began.
 */
@Injectable()
export class CouponIssuer {
  constructor(
    private readonly store: EventStore,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly qr: CouponQr,
    private readonly catalog: CatalogQueries,
    private readonly codeKey: CouponCodeKey,
  ) {}

  /**
   * Starts drawing the QR images of a purchase's coupons (their codes derive from the purchase id),
   * so that they are ready when the answer is written, instead of adding a trip to the QR thread
   * after the purchase. Only a head start: the answer draws whatever is not ready, and an image
   * asked for again is drawn once. Returns the codes by coupon id, for the coupons' issue. A card
   * purchase calls it as soon as its units are held, beside the charge (see `BuyWithStoredCardHandler`).
   */
  drawQrCodesAhead(purchaseId: string, quantity: number): Map<string, CouponCodes> {
    const codes = new Map(couponIdsFor(purchaseId, quantity).map((couponId) => [couponId, couponCodes(couponId, this.codeKey.secret)]));
    for (const { redemptionCode } of codes.values()) this.qr.png(redemptionCode).catch(() => undefined);
    return codes;
  }

  async complete(
    purchaseId: string,
    caller: CommandCaller & { partnerId: string },
    record: (holdId: string) => ClaimPurchase | RecordPayment | RecordResale,
    forBuyer: ForBuyer = {},
  ): Promise<{ purchaseId: string; position: LogPosition | null }> {
    const context = { now: this.clock.now(), metadata: caller };
    const { reserved, state: before } = await this.readPurchase(purchaseId);
    const { deal, quantity, holdId: reservedHold } = reserved;
    const codes = this.drawQrCodesAhead(purchaseId, quantity);
    let holdId = before.status === 'fulfilled' ? before.holdId! : reservedHold;
    if (before.status !== 'fulfilled') holdId = await this.sell(purchaseId, deal.dealId, reservedHold, quantity, forBuyer, context);
    const recorded = await handleCommand(this.store, purchaseStream(purchaseId), purchaseDecider, record(holdId), context);
    const issued = await this.issueCoupons(purchaseId, deal, recorded.state, context, codes);
    // What was recorded already (an earlier try's, another process's at this moment) reports its
    // streams' last events: the answer waits for them as for its own.
    const position = laterPosition(recorded.position, issued);
    await disarmHoldRelease(this.scheduler, purchaseId);
    return { purchaseId, position };
  }

  /**
   * The same tail for a card purchase this process reserved and charged a moment ago (so it knows
   * the deal, the quantity and the hold, and nothing else writes the purchase's stream): once the
   * units are sold, the payment and the coupons are written together (their ids derive from the
   * purchase). A crash between them leaves a reserved purchase with an approved charge, which
   * recovery completes (`complete`, then the coupons already issued are not issued twice).
   */
  async completePaid(
    purchase: { purchaseId: string; deal: DealSnapshot; quantity: number; holdId: string; userId: string; codes: Map<string, CouponCodes> },
    caller: CommandCaller & { partnerId: string },
    record: (holdId: string) => RecordPayment,
    forBuyer: ForBuyer,
  ): Promise<{ purchaseId: string; position: LogPosition | null }> {
    // One context for the sale, the payment and the coupons: their events share one metadata object.
    const context = { now: this.clock.now(), metadata: caller };
    // `codes`: from `drawQrCodesAhead`, called when the units were held.
    const { purchaseId, deal, quantity, userId, codes } = purchase;
    const holdId = await this.sell(purchaseId, deal.dealId, purchase.holdId, quantity, forBuyer, context);
    const [recorded, issued] = await Promise.all([
      handleCommand(this.store, purchaseStream(purchaseId), purchaseDecider, record(holdId), context),
      this.issueCoupons(purchaseId, deal, { couponIds: [...codes.keys()], userId }, context, codes),
      disarmHoldRelease(this.scheduler, purchaseId),
    ]);
    return { purchaseId, position: laterPosition(recorded.position, issued) };
  }

  /** The purchase's stream, read once: what its reservation recorded, and its state now. */
  private async readPurchase(purchaseId: string) {
    const history = (await this.store.readStream(purchaseStream(purchaseId), 0)) as unknown as PurchaseEvent[];
    const reserved = history[0].data as { deal: DealSnapshot; quantity: number; holdId: string };
    return { reserved, state: fold(purchaseDecider, history) };
  }

  /**
   * Sells the held units, or, when the hold lapsed or was released, fresh ones (refused if the deal
   * sold out meanwhile); returns the hold sold. The buyer's units count against the deal's per-user
   * limit (`forBuyer`) unless their hold already did.
   */
  private async sell(
    purchaseId: string,
    dealId: string,
    holdId: string,
    quantity: number,
    forBuyer: ForBuyer,
    context: CommandContext,
  ): Promise<string> {
    try {
      await handleCommand(
        this.store,
        inventoryStream(dealId),
        inventoryDecider,
        { type: 'SellHeldUnits', data: { dealId, holdId, ...forBuyer } },
        context,
      );
      return holdId;
    } catch (error) {
      if (!(error instanceof CannotFulfil) || error instanceof OverPerUserLimit) throw error;
      // One replacement per purchase, by a fixed id: a retry after a crash finds it held or sold
      // (both commands change nothing then) instead of selling the purchase's units twice.
      const fresh = replacementHoldId(purchaseId);
      // Taken already, by an earlier try of this purchase stopped after it (sold, or held and live):
      // that hold is sold, whatever the deal's state now, as a live hold is.
      if (await this.sellIfTaken(dealId, fresh, forBuyer, context)) return fresh;
      // Fresh units only while the deal is on sale: a paused or ended deal sells none (a card
      // purchase refunds its charge then; a claim is refused).
      const view = await this.catalog.deal(dealId);
      if (!view) throw new CannotFulfil('the deal is no longer listed');
      refuseOffSale(view, context.now.getTime());
      await handleCommand(
        this.store,
        inventoryStream(dealId),
        inventoryDecider,
        { type: 'HoldUnits', data: { dealId, holdId: fresh, quantity, ...forBuyer } },
        context,
      );
      await handleCommand(
        this.store,
        inventoryStream(dealId),
        inventoryDecider,
        { type: 'SellHeldUnits', data: { dealId, holdId: fresh } },
        context,
      );
      return fresh;
    }
  }

  /**
   * Sells `holdId` if it is held and live, or finds it sold already (to this buyer, when one is
   * named); false when there is no such hold to sell (never taken, lapsed or released).
   */
  private async sellIfTaken(dealId: string, holdId: string, forBuyer: ForBuyer, context: CommandContext): Promise<boolean> {
    try {
      await handleCommand(
        this.store,
        inventoryStream(dealId),
        inventoryDecider,
        { type: 'SellHeldUnits', data: { dealId, holdId, ...forBuyer } },
        context,
      );
      return true;
    } catch (error) {
      if (error instanceof CannotFulfil && !(error instanceof OverPerUserLimit)) return false;
      throw error;
    }
  }

  /**
   * Issues the coupons a fulfilled purchase names and does not have yet (what a crash between the
   * fulfilment and its coupons leaves); nothing for any other purchase.
   */
  async issueOwed(purchaseId: string, caller: CommandCaller & { partnerId: string }): Promise<LogPosition | null> {
    const { reserved, state } = await this.readPurchase(purchaseId);
    if (state.status !== 'fulfilled') return null;
    return this.issueCoupons(purchaseId, reserved.deal, state, { now: this.clock.now(), metadata: caller });
  }

  private async issueCoupons(
    purchaseId: string,
    deal: DealSnapshot,
    purchase: { couponIds: string[]; userId: string | null },
    context: PartnerContext,
    codes?: Map<string, CouponCodes>,
  ): Promise<LogPosition | null> {
    const { now, metadata: caller } = context;
    const expiresAt = couponExpiry(deal, now);
    // From the state, not the new events: a second run issues the coupons a crash left out.
    // A coupon's stream is new but after a crash (its id derives from the purchase): no read first.
    const issued = await Promise.all(
      purchase.couponIds.map((couponId) =>
        handleCommand(
          this.store,
          couponStream(couponId),
          couponDecider,
          {
            type: 'IssueCoupon',
            data: {
              couponId,
              purchaseId,
              partnerId: caller.partnerId,
              userId: purchase.userId,
              dealId: deal.dealId,
              dealType: deal.type,
              ...(codes?.get(couponId) ?? couponCodes(couponId, this.codeKey.secret)),
              expiresAt,
              issuedAt: now.toISOString(),
              refundable: deal.fulfillmentMethod !== 'shipped',
            },
          },
          context,
          { freshStream: true },
        ),
      ),
    );
    return issued.reduce<LogPosition | null>((latest, { position }) => laterPosition(latest, position), null);
  }
}
