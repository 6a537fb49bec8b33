import { AccountsModule } from '@deals/accounts';
import { CatalogModule } from '@deals/catalog';
import { Module } from '@nestjs/common';
import { BuyWithStoredCardHandler } from './commands/buy-with-stored-card.command';
import { CouponIssuer } from './commands/coupon-issuer';
import { FullPurchaseHandler } from './commands/full-purchase.command';
import { CancelCouponHandler, RedeemCouponHandler } from './commands/redeem-coupon.command';
import { RecordResellerPurchaseHandler } from './commands/reseller-purchase.command';
import {
  ClaimReservationHandler,
  ReleaseExpiredHoldHandler,
  ReleaseReservationHandler,
  ReserveUnitsHandler,
} from './commands/reservation.handlers';
import { StockInventoryHandler } from './commands/stock-inventory.command';
import { CouponQr } from './coupon-images/coupon-qr';
import { CouponsController } from './http/coupons.controller';
import { PurchasesController } from './http/purchases.controller';
import { ResellersController } from './http/resellers.controller';
import { OpenHolds } from './queries/open-holds';
import { PurchaseQueries } from './queries/purchase.queries';
import { PurchaseAudit } from './audit/purchase-audit';
import { RecoverInterruptedPayments } from './reactions/recover-interrupted-payments';
import { KeyedPurchases } from './commands/keyed-purchases';
import { AuditController } from './http/audit.controller';
import { ReleaseExpiredHolds } from './reactions/release-expired-holds.reaction';

/** Inventory, purchases and coupons: commands, handlers, queries and the hold-expiry job. */
@Module({
  imports: [CatalogModule, AccountsModule],
  providers: [
    StockInventoryHandler,
    ReserveUnitsHandler,
    ClaimReservationHandler,
    ReleaseReservationHandler,
    ReleaseExpiredHoldHandler,
    RedeemCouponHandler,
    BuyWithStoredCardHandler,
    FullPurchaseHandler,
    RecordResellerPurchaseHandler,
    CancelCouponHandler,
    CouponIssuer,
    PurchaseQueries,
    OpenHolds,
    ReleaseExpiredHolds,
    PurchaseAudit,
    RecoverInterruptedPayments,
    KeyedPurchases,
    CouponQr,
  ],
  exports: [PurchaseQueries, ReleaseExpiredHolds, PurchaseAudit, RecoverInterruptedPayments, CouponQr],
})
export class PurchasingModule {}

/** Purchasing's HTTP routes. */
@Module({
  imports: [PurchasingModule, AccountsModule],
  controllers: [PurchasesController, CouponsController, ResellersController, AuditController],
})
export class PurchasingHttpModule {}
