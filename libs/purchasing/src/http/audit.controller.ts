import { Forbidden, ValidationFailed } from '@deals/kernel';
import { CurrentPartner, PartnerRef } from '@deals/wire';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { PurchaseAudit } from '../audit/purchase-audit';

/** An ISO 8601 date, or date and time with an offset (`Z` or ±hh:mm): never a local time. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/** Whether `YYYY-MM-DD` names a day the calendar has (2026-02-30 does not). */
function realDay(ymd: string): boolean {
  const [year, month, day] = ymd.split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A purchase's history for auditor credentials (`partners:create --role auditor`): read only. */
@Controller('audit/purchases')
export class AuditController {
  constructor(private readonly audit: PurchaseAudit) {}

  @Get(':purchase_id')
  async history(@Param('purchase_id') purchaseId: string, @Query('as_of') asOf: string | undefined, @CurrentPartner() partner: PartnerRef) {
    if (partner.role !== 'auditor') throw new Forbidden('purchase histories are for auditor credentials');
    const cut = asOf === undefined ? null : new Date(asOf);
    // A history cut at a moment that is not one would pass the whole history off as that moment's.
    if (cut && (!ISO_INSTANT.test(asOf!) || Number.isNaN(cut.getTime()) || !realDay(asOf!.slice(0, 10)))) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'request', field: 'as_of', message: 'must be an ISO 8601 instant' }]);
    }
    return { status: 'success', purchase_id: purchaseId, events: await this.audit.history(purchaseId, cut) };
  }
}
