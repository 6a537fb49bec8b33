import { AttributedEvent, attributedEvent, EventStore, fold, NotFound, RecordedEvent } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { couponStream } from '../domain/coupon/coupon.events';
import { partnerInventoryStream } from '../domain/inventory/inventory.events';
import { purchaseDecider } from '../domain/purchase/purchase.decider';
import { DealSnapshot, PurchaseEvent, purchaseStream } from '../domain/purchase/purchase.events';
import { chargeLockStream } from '../domain/charge-lock/charge-lock';
import { reservationLapsed } from '../domain/purchase/reservation-lapse';
import { transactionReferenceStream } from '../domain/purchase/resale-claim';

export interface AuditEntry extends AttributedEvent {
  /** The purchase's status after this event (a reservation whose hold lapsed by then: released). */
  purchaseState: string;
}

/** All but the last four characters hidden: enough to match a code a merchant reads out, not to use it. */
const lastFour = (code: string) => '•'.repeat(Math.max(0, code.length - 4)) + code.slice(-4);

/**
 * The entry with its coupon's redemption secrets (barcode, redemption code) cut to their last four
 * characters. Either one redeems the coupon at the merchant's counter, and an auditor's credential
 * reads every partner's purchases: the history over HTTPS shows them masked; the operator's CLI, on
 * the host that holds the log, shows them whole.
 */
export function withMaskedCouponCodes(entry: AuditEntry): AuditEntry {
  if (entry.type !== 'CouponIssued') return entry;
  const data = entry.data as { barcode: string; redemptionCode: string };
  return { ...entry, data: { ...data, barcode: lastFour(data.barcode), redemptionCode: lastFour(data.redemptionCode) } };
}

/**
 * Every event that concerns a purchase, in log order: its own stream, the inventory holds, sales
 * and releases of its units, its coupons, its charge lock, and a reseller's claim of its
 * transaction reference; with who caused each and the purchase's state after it. `asOf` cuts the history at an instant.
 */
@Injectable()
export class PurchaseAudit {
  constructor(private readonly store: EventStore) {}

  async history(purchaseId: string, asOf: Date | null = null): Promise<AuditEntry[]> {
    const own = await this.store.readStream(purchaseStream(purchaseId));
    if (own.length === 0) throw new NotFound('purchase not found');
    const reserved = own[0].data as {
      partnerId: string;
      deal: DealSnapshot;
      holdExpiresAt: string;
      payment?: { userId: string };
      transactionReference?: string;
    };
    const mine = (event: RecordedEvent) =>
      String((event.data as { holdId?: string }).holdId ?? '').startsWith(purchaseId) ||
      (event.data as { purchaseId?: string }).purchaseId === purchaseId;
    const purchase = fold(purchaseDecider, own as unknown as PurchaseEvent[]);
    const couponIds = purchase.status === 'fulfilled' ? purchase.couponIds : [];
    const related = [
      ...own,
      // A sandbox's purchase took its units from the sandbox's own inventory of the deal.
      ...(await this.store.readStream(partnerInventoryStream(reserved.deal.dealId, reserved.partnerId))).filter(mine),
      ...(await Promise.all(couponIds.map((id) => this.store.readStream(couponStream(id))))).flat(),
      ...(reserved.payment ? (await this.store.readStream(chargeLockStream(reserved.payment.userId))).filter(mine) : []),
      // A reseller's sale: its claim of the reference (with the terms it recorded), its mark as selling.
      ...(reserved.transactionReference !== undefined
        ? (await this.store.readStream(transactionReferenceStream(reserved.partnerId, reserved.transactionReference))).filter(mine)
        : []),
    ].sort((a, b) => (a.position < b.position ? -1 : 1));
    const cut = asOf ? related.filter((e) => Date.parse(e.metadata.occurredAt) <= asOf.getTime()) : related;
    const purchaseEvents: PurchaseEvent[] = [];
    let holdSold = false;
    return cut.map((event) => {
      if (event.streamId === purchaseStream(purchaseId)) purchaseEvents.push(event as unknown as PurchaseEvent);
      if (event.type === 'UnitsSold' && (event.data as { holdId: string }).holdId === purchaseId) holdSold = true;
      const purchase = fold(purchaseDecider, purchaseEvents);
      // A reservation whose hold lapsed unclaimed is released from its expiry on, with or without an event.
      const lapsed =
        purchase.status === 'reserved' &&
        purchase.kind === 'reservation' &&
        reservationLapsed({ holdExpiresAt: reserved.holdExpiresAt, holdSold }, Date.parse(event.metadata.occurredAt));
      return { ...attributedEvent(event), purchaseState: lapsed ? 'released' : purchase.status };
    });
  }
}
