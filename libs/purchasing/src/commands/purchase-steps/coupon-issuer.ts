import { CatalogQueries } from '@deals/catalog';
import {
  CannotFulfil,
  Clock,
  CommandCaller,
  CommandContext,
  CommandPart,
  datedUnit,
  EventStore,
  fold,
  handleCommand,
  handleCommands,
  laterPosition,
  LogPosition,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { chargeLockDecider, chargeLockStream } from '../../domain/charge-lock/charge-lock';
import { couponDecider } from '../../domain/coupon/coupon.decider';
import { couponStream } from '../../domain/coupon/coupon.events';
import { ForBuyer, inventoryDecider, OverPerUserLimit } from '../../domain/inventory/inventory.decider';
import { partnerInventoryStream, replacementHoldId } from '../../domain/inventory/inventory.events';
import { purchaseDecider } from '../../domain/purchase/purchase.decider';
import { couponIdsFor, DealSnapshot, PurchaseEvent, purchaseStream } from '../../domain/purchase/purchase.events';
import { CouponQr } from '../../coupon-images/coupon-qr';
import type { IssueCouponsData, Lock, PurchaseWorkflowCommand } from '../../domain/purchase-workflow/purchase.workflow';
import { CouponCodeKey, CouponCodes, couponCodes } from './coupon-codes';
import { holdPartnerUnits } from './partner-inventory';
import { refuseOffSale } from './sale-rules';

/**
 * When a coupon issued at `now` expires: `expiration_days` after it (when set, the days after
 * which a voucher expires), but never after the deal's `expires_at`; either alone when only one is
 * set; null when neither is.
 */
export function couponExpiry(deal: Pick<DealSnapshot, 'expiresAt' | 'expirationDays'>, now: Date): string | null {
  const byDays = deal.expirationDays ? now.getTime() + deal.expirationDays * 86_400_000 : null;
  const byDate = deal.expiresAt ? Date.parse(deal.expiresAt) : null;
  if (byDays === null) return deal.expiresAt ?? null;
  return byDate !== null && byDate <= byDays ? deal.expiresAt : new Date(byDays).toISOString();
}

type SellUnitsStep = Extract<PurchaseWorkflowCommand, { type: 'SellUnits' }>['data'];
type RecordSaleStep = Extract<PurchaseWorkflowCommand, { type: 'RecordSale' }>['data'];

/** The purchase decider's command that records a sale: a payment, a claim or a resale, with the hold sold. */
export function saleRecordCommand({ kind, data, holdId }: RecordSaleStep): Parameters<typeof purchaseDecider.decide>[0] {
  const type = kind === 'payment' ? 'RecordPayment' : kind === 'claim' ? 'ClaimPurchase' : 'RecordResale';
  return { type, data: { ...data, holdId } } as Parameters<typeof purchaseDecider.decide>[0];
}

/** A command context whose caller is a partner (the coupons record which one). */
export type PartnerContext = CommandContext & { metadata: CommandCaller & { partnerId: string } };

/**
 * The sale's steps every purchase shares once it is paid for (the purchase workflow asks for them):
 * read what the purchase recorded, sell the held units (on a fresh hold when the first lapsed or
 * was released, which fails if the deal sold out meanwhile), and issue one coupon per unit. Each is
 * idempotent (coupon ids derive from the purchase), so a run after a crash completes what the first began.
 */
@Injectable()
export class CouponIssuer {
  constructor(
    private readonly store: EventStore,
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

  /** The purchase's stream, read once: what its reservation recorded, and its state now. */
  async readPurchase(purchaseId: string) {
    const history = (await this.store.readStream(purchaseStream(purchaseId), 0)) as unknown as PurchaseEvent[];
    const reserved = history[0].data as { deal: DealSnapshot; quantity: number; holdId: string };
    return { reserved, state: fold(purchaseDecider, history) };
  }

  /**
   * Sells the held units, or, when the hold lapsed or was released, fresh ones (refused if the deal
   * sold out meanwhile); returns the hold sold. The buyer's units count against the deal's per-user
   * limit (`forBuyer`) unless their hold already did. The units are the purchase's partner's (the
   * caller's): a sandbox's come from its own inventory of the deal.
   */
  async sell(
    purchaseId: string,
    dealId: string,
    holdId: string,
    quantity: number,
    forBuyer: ForBuyer,
    context: PartnerContext,
  ): Promise<string> {
    const { partnerId } = context.metadata;
    const inventory = partnerInventoryStream(dealId, partnerId);
    try {
      await handleCommand(
        this.store,
        inventory,
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
      if (await this.sellIfTaken(inventory, dealId, fresh, forBuyer, context)) return fresh;
      // Fresh units only while the deal is on sale: a paused or ended deal sells none (a card
      // purchase refunds its charge then; a claim is refused).
      const view = await this.catalog.deal(dealId);
      if (!view) throw new CannotFulfil('the deal is no longer listed');
      refuseOffSale(view, context.now.getTime());
      await holdPartnerUnits(this.store, { type: 'HoldUnits', data: { dealId, holdId: fresh, quantity, ...forBuyer } }, partnerId, context);
      await handleCommand(this.store, inventory, inventoryDecider, { type: 'SellHeldUnits', data: { dealId, holdId: fresh } }, context);
      return fresh;
    }
  }

  /**
   * Sells `holdId` if `inventory` holds it live, or finds it sold already (to this buyer, when one
   * is named); false when there is no such hold to sell (never taken, lapsed or released).
   */
  private async sellIfTaken(
    inventory: string,
    dealId: string,
    holdId: string,
    forBuyer: ForBuyer,
    context: CommandContext,
  ): Promise<boolean> {
    try {
      await handleCommand(
        this.store,
        inventory,
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

  async issueCoupons(
    purchaseId: string,
    deal: DealSnapshot,
    purchase: { couponIds: string[]; userId: string | null },
    context: PartnerContext,
    codes?: Map<string, CouponCodes>,
  ): Promise<LogPosition | null> {
    // From the state, not the new events: a second run issues the coupons a crash left out.
    // A coupon's stream is new but after a crash (its id derives from the purchase): no read first.
    const issued = await Promise.all(
      this.couponIssues(purchaseId, deal, purchase, context, codes).map((part) =>
        handleCommand(this.store, part.streamId, part.decider, part.command, context, { freshStream: true }),
      ),
    );
    return issued.reduce<LogPosition | null>((latest, { position }) => laterPosition(latest, position), null);
  }

  /**
   * A charged purchase's sale in one unit of work: its held units sold (in the turns of the deal's
   * inventory, with the purchases waiting on it), its payment recorded, its coupons issued and a
   * card purchase's charge lock ended (`endCharge`), all or none. Refused (the hold lapsed or was released, the purchase is no longer reserved): nothing
   * is written, and the caller sells step by step. Returns the position of the write.
   */
  async finishSale(
    sale: { sell: SellUnitsStep; record: RecordSaleStep; issue: IssueCouponsData; endCharge: Lock | null },
    context: PartnerContext,
    codes?: Map<string, CouponCodes>,
  ): Promise<LogPosition | null> {
    const { sell, record, issue, endCharge } = sale;
    const parts: CommandPart[] = [
      {
        streamId: partnerInventoryStream(sell.dealId, context.metadata.partnerId),
        decider: inventoryDecider,
        command: {
          type: 'SellHeldUnits',
          data: { dealId: sell.dealId, holdId: sell.holdId, buyer: sell.buyer, maxPerBuyer: sell.maxPerBuyer },
        },
        lane: true,
      },
      {
        streamId: purchaseStream(sell.purchaseId),
        decider: purchaseDecider,
        command: saleRecordCommand(record),
      },
      ...this.couponIssues(issue.purchaseId, issue.deal, issue, context, codes),
    ];
    // The charge approved and its sale written: the user's next purchase may charge.
    if (endCharge)
      parts.push({
        streamId: chargeLockStream(endCharge.userId),
        decider: chargeLockDecider,
        command: { type: 'EndCharge', data: { ...endCharge, saleFollows: true } },
      });
    // A claim's or a resale's line is booked here, dated now (a card sale's was to come since its charge began).
    const unit = record.kind === 'payment' ? parts : datedUnit(parts, context.now);
    const outcomes = await handleCommands(this.store, unit, context);
    return outcomes[0].position;
  }

  /** The coupons' issue, one command on each coupon's new stream. */
  private couponIssues(
    purchaseId: string,
    deal: DealSnapshot,
    purchase: { couponIds: string[]; userId: string | null },
    context: PartnerContext,
    codes?: Map<string, CouponCodes>,
  ): CommandPart[] {
    const { now, metadata: caller } = context;
    const expiresAt = couponExpiry(deal, now);
    return purchase.couponIds.map((couponId) => ({
      streamId: couponStream(couponId),
      decider: couponDecider,
      command: {
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
      freshStream: true,
    }));
  }
}
