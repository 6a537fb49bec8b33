import { CatalogQueries } from '@deals/catalog';
import {
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
import { HoldUnits, inventoryDecider } from '../../domain/inventory/inventory.decider';
import { partnerInventoryStream } from '../../domain/inventory/inventory.events';
import { purchaseDecider } from '../../domain/purchase/purchase.decider';
import { couponIdsFor, DealSnapshot, PurchaseEvent, purchaseStream } from '../../domain/purchase/purchase.events';
import { CouponQr } from '../../coupon-images/coupon-qr';
import type { SaleUnit, SaleUnits } from '../../domain/purchase-workflow/purchase.workflow';
import { CouponCodeKey, CouponCodes, couponCodes } from './coupon-codes';
import { holdAs } from './partner-inventory';
import { offSaleReason } from './sale-rules';

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

/** The purchase decider's command that records a sale: a payment, a claim or a resale, with the hold sold. */
function saleRecordCommand({ kind, data, holdId }: SaleUnit['record']): Parameters<typeof purchaseDecider.decide>[0] {
  const type = kind === 'payment' ? 'RecordPayment' : kind === 'claim' ? 'ClaimPurchase' : 'RecordResale';
  return { type, data: { ...data, holdId } } as Parameters<typeof purchaseDecider.decide>[0];
}

/** A command context whose caller is a partner (the coupons record which one). */
export type PartnerContext = CommandContext & { metadata: CommandCaller & { partnerId: string } };

/**
 * The sale every purchase shares once it is paid for (the purchase workflow asks for it): read what
 * the purchase recorded, then its unit of work (the units sold, on a fresh hold when the first
 * lapsed or was released; the sale recorded; one coupon issued per unit). Each part is idempotent
 * (coupon ids derive from the purchase), so a run after a crash completes what the first began.
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
   * Issues the coupons a fulfilled purchase names and does not have yet (a sale left part-written: a
   * store appending stream by stream, a log from step-by-step sales); nothing for any other purchase.
   */
  async issueOwed(purchaseId: string, caller: CommandCaller & { partnerId: string }): Promise<LogPosition | null> {
    const { reserved, state } = await this.readPurchase(purchaseId);
    if (state.status !== 'fulfilled') return null;
    const context = { now: this.clock.now(), metadata: caller };
    // From the state, not the new events: a second run issues the coupons a crash left out.
    // A coupon's stream is new but after a crash (its id derives from the purchase): no read first.
    const issued = await Promise.all(
      this.couponIssues(purchaseId, reserved.deal, { couponIds: state.couponIds, userId: state.holder }, context).map((part) =>
        handleCommand(this.store, part.streamId, part.decider, part.command, context, { freshStream: true }),
      ),
    );
    return issued.reduce<LogPosition | null>((latest, { position }) => laterPosition(latest, position), null);
  }

  /**
   * A sale in one unit of work: its units sold (in the turns of the deal's inventory, with the
   * purchases waiting on it), the sale recorded, its coupons issued and a card purchase's charge
   * lock ended (`endCharge`), all or none; a claim's or a resale's line dated now with them. Refused
   * (the hold lapsed or was released, no fresh units): nothing is written. Returns the position of the write.
   */
  async finishSale(sale: SaleUnit, context: PartnerContext, codes?: Map<string, CouponCodes>): Promise<LogPosition | null> {
    const { units, record, issue, endCharge, recorded } = sale;
    const { dealId, holdId, buyer, maxPerBuyer } = units;
    const inventory = partnerInventoryStream(dealId, context.metadata.partnerId);
    const sell: CommandPart = {
      streamId: inventory,
      decider: inventoryDecider,
      command: { type: 'SellHeldUnits', data: { dealId, holdId, buyer, maxPerBuyer } },
    };
    const parts: CommandPart[] = [
      ...(units.fresh ? [await this.freshHold(inventory, units, context), sell] : [{ ...sell, lane: true }]),
      { streamId: purchaseStream(units.purchaseId), decider: purchaseDecider, command: saleRecordCommand(record) },
      // New but on a retry of a sale the purchase shows recorded: read first then.
      ...this.couponIssues(issue.purchaseId, issue.deal, issue, context, codes, !recorded),
    ];
    // The charge approved and its sale written: the user's next purchase may charge.
    if (endCharge)
      parts.push({
        streamId: chargeLockStream(endCharge.userId),
        decider: chargeLockDecider,
        command: { type: 'EndCharge', data: { ...endCharge, saleFollows: true } },
      });
    // A claim's or a resale's line is booked here, dated now (a card sale's was to come since its
    // charge began; a sale recorded already booked its line).
    const unit = record.kind === 'payment' || recorded ? parts : datedUnit(parts, context.now);
    const outcomes = await handleCommands(this.store, unit, context);
    return outcomes[0].position;
  }

  /**
   * The hold of a sale's fresh units, decided in its unit before their sale: only while the deal is
   * on sale (the catalogue's refusal goes in the command, so that a hold an earlier try took is sold
   * as it is, whatever the deal's state now); a sandbox's from its own inventory of the deal. A known
   * buyer's fresh units count against the deal's per-user limit: the one the sale names, else (a
   * settling, whose reservation keeps none) the catalogue's now.
   */
  private async freshHold(inventory: string, units: SaleUnits, context: PartnerContext): Promise<CommandPart> {
    const { dealId, holdId, quantity, buyer } = units;
    const view = await this.catalog.deal(dealId);
    const offSale = view ? offSaleReason(view, context.now.getTime()) : 'the deal is no longer listed';
    const maxPerBuyer = units.maxPerBuyer ?? (buyer === undefined ? undefined : (view?.deal?.max_per_user ?? undefined));
    const hold: HoldUnits = {
      type: 'HoldUnits',
      data: { dealId, holdId, quantity, buyer, maxPerBuyer, ...(offSale === null ? {} : { offSale }) },
    };
    return {
      streamId: inventory,
      decider: inventoryDecider,
      command: await holdAs(this.store, hold, context.metadata.partnerId),
      lane: true,
    };
  }

  /** The coupons' issue, one command on each coupon's stream (new unless `fresh` is false). */
  private couponIssues(
    purchaseId: string,
    deal: DealSnapshot,
    purchase: { couponIds: string[]; userId: string | null },
    context: PartnerContext,
    codes?: Map<string, CouponCodes>,
    fresh = true,
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
      freshStream: fresh,
    }));
  }
}
