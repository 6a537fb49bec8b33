import { Forbidden, isoInstant, ValidationFailed } from '@deals/kernel';
import { CurrentPartner, PartnerRef } from '@deals/wire';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { PurchaseAudit, withMaskedCouponCodes } from '../audit/purchase-audit';

/**
 * A purchase's history for auditor credentials (`partners:create --role auditor`): read only, with
 * coupons' redemption secrets masked ({@link withMaskedCouponCodes}).
 */
@Controller('audit/purchases')
export class AuditController {
  constructor(private readonly audit: PurchaseAudit) {}

  @Get(':purchase_id')
  async history(@Param('purchase_id') purchaseId: string, @Query('as_of') asOf: string | undefined, @CurrentPartner() partner: PartnerRef) {
    if (partner.role !== 'auditor') throw new Forbidden('purchase histories are for auditor credentials');
    const cut = asOf === undefined ? null : isoInstant(asOf);
    if (asOf !== undefined && !cut) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'request', field: 'as_of', message: 'must be an ISO 8601 instant' }]);
    }
    return { status: 'success', purchase_id: purchaseId, events: (await this.audit.history(purchaseId, cut)).map(withMaskedCouponCodes) };
  }
}
