import { AccountsModule } from '@deals/accounts';
import { CatalogModule } from '@deals/catalog';
import { Module } from '@nestjs/common';
import { BuyWithStoredCardHandler } from './commands/buy-with-stored-card/buy-with-stored-card.command';
import { CouponIssuer } from './commands/purchase-steps/coupon-issuer';
import { PurchaseSteps } from './commands/purchase-steps/purchase-steps';
import { ResaleSteps } from './commands/purchase-steps/resale-steps';
import { FullPurchaseHandler } from './commands/full-purchase/full-purchase.command';
import { CancelCouponHandler } from './commands/cancel-coupon/cancel-coupon.command';
import { RedeemCouponHandler } from './commands/redeem-coupon/redeem-coupon.command';
import { RollBackRedemptionHandler } from './commands/roll-back-redemption/roll-back-redemption.command';
import { RecordResellerPurchaseHandler } from './commands/record-reseller-purchase/record-reseller-purchase.command';
import { EraseResaleBuyerHandler } from './commands/erase-resale-buyer/erase-resale-buyer.command';
import { FinishResaleBuyerErasures } from './commands/erase-resale-buyer/finish-resale-buyer-erasures';
import { ClaimReservationHandler } from './commands/claim-reservation/claim-reservation.command';
import { ReleaseExpiredHoldHandler } from './commands/release-expired-hold/release-expired-hold.command';
import { ReleaseReservationHandler } from './commands/release-reservation/release-reservation.command';
import { ReserveUnitsHandler } from './commands/reserve-units/reserve-units.command';
import { StockInventoryHandler } from './commands/stock-inventory/stock-inventory.command';
import { CouponQr } from './coupon-images/coupon-qr';
import { CouponsController } from './http/coupons.controller';
import { PurchasesController } from './http/purchases.controller';
import { DryRunsController } from './http/dry-runs.controller';
import { RefundsController } from './http/refunds.controller';
import { ResellersController } from './http/resellers.controller';
import { OpenHolds } from './queries/open-holds';
import { PurchaseQueries } from './queries/purchase.queries';
import { PurchaseAudit } from './audit/purchase-audit';
import { RecoverInterruptedPayments } from './reactions/recover-interrupted-payments.reaction';
import { DecidedPurchases } from './commands/purchase-steps/decided-purchases';
import { KeyedPurchases } from './commands/purchase-steps/keyed-purchases';
import { AuditController } from './http/audit.controller';
import { ReleaseExpiredHolds } from './reactions/release-expired-holds.reaction';
import { ExpireCouponHandler } from './commands/expire-coupon/expire-coupon.command';
import { ExpireCoupons } from './reactions/expire-coupons.reaction';
import { RefundPurchaseHandler, RefundSteps } from './commands/refund-purchase/refund-purchase.command';

/** Inventory, purchases and coupons: commands, handlers, queries, the hold-expiry job and the coupon-expiry sweep. */
@Module({
  imports: [CatalogModule, AccountsModule],
  providers: [
    StockInventoryHandler,
    ReserveUnitsHandler,
    ClaimReservationHandler,
    ReleaseReservationHandler,
    ReleaseExpiredHoldHandler,
    RedeemCouponHandler,
    RollBackRedemptionHandler,
    BuyWithStoredCardHandler,
    FullPurchaseHandler,
    RecordResellerPurchaseHandler,
    EraseResaleBuyerHandler,
    FinishResaleBuyerErasures,
    CancelCouponHandler,
    ExpireCouponHandler,
    RefundPurchaseHandler,
    RefundSteps,
    CouponIssuer,
    PurchaseSteps,
    ResaleSteps,
    PurchaseQueries,
    OpenHolds,
    ReleaseExpiredHolds,
    ExpireCoupons,
    PurchaseAudit,
    RecoverInterruptedPayments,
    KeyedPurchases,
    DecidedPurchases,
    CouponQr,
  ],
  exports: [
    PurchaseQueries,
    ReleaseExpiredHolds,
    ExpireCoupons,
    PurchaseAudit,
    RecoverInterruptedPayments,
    CouponQr,
    RefundSteps,
    FinishResaleBuyerErasures,
  ],
})
export class PurchasingModule {}

/** Purchasing's HTTP routes. */
@Module({
  imports: [PurchasingModule, AccountsModule],
  controllers: [PurchasesController, DryRunsController, RefundsController, CouponsController, ResellersController, AuditController],
})
export class PurchasingHttpModule {}
