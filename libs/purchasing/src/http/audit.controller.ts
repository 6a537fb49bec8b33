import { HistoryProofs } from '@deals/kernel';
import { CalledBy } from '@deals/wire';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, ApiRequest, AuditQuery, toStreamSeal } from '@deals/wire';
import { AuditAnswer } from './purchasing.answers';
import { PurchaseAudit, withMaskedCouponCodes } from '../audit/purchase-audit';
import { purchaseStream } from '../domain/purchase/purchase.events';

/**
 * A purchase's history for auditor credentials (`partners:create --role auditor`): read only, with
 * coupons' redemption secrets masked ({@link withMaskedCouponCodes}).
 */
@ApiTags('audit')
@Controller('audit/purchases')
export class AuditController {
  constructor(
    private readonly audit: PurchaseAudit,
    private readonly proofs: HistoryProofs,
  ) {}

  @Get(':purchase_id')
  @CalledBy('auditor')
  @ApiOperation({
    summary: "A purchase's whole history",
    description:
      'For auditor credentials: every event in log order with the purchase state after each; `as_of` an ISO 8601 instant. ' +
      '`seal`: the purchase stream’s events as stored, each with its hash, its link in the stream’s chain and its Merkle audit path, ' +
      'and the signed checkpoints holding them, for the auditor to check by themselves (the README shows how).',
  })
  @ApiAnswer(AuditAnswer, { errors: [404, 422] })
  @ApiRequest({ query: AuditQuery })
  async history(@Param('purchase_id') purchaseId: string, @Query() query: AuditQuery) {
    const cut = query.as_of;
    const events = (await this.audit.history(purchaseId, cut)).map(withMaskedCouponCodes);
    const seal = toStreamSeal(await this.proofs.streamProof(purchaseStream(purchaseId)), this.proofs.publicKeyPem());
    return { status: 'success', purchase_id: purchaseId, events, seal };
  }
}
