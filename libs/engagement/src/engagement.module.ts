import { AccountsModule } from '@deals/accounts';
import { CatalogModule, UserDealPreferences } from '@deals/catalog';
import { PurchasingModule } from '@deals/purchasing';
import { Module } from '@nestjs/common';
import {
  LinkCardsHandler,
  MoveCardLinkHandler,
  RedeemCardLinkTransactionHandler,
  ReportCardTransactionPhaseHandler,
} from './commands/card-link.commands';
import { CardLinksController } from './http/card-links.controller';
import { TestHelpersController } from './http/test-helpers.controller';
import { SavedDealsController } from './http/saved-deals.controller';
import { SubscriptionsController } from './http/subscriptions.controller';
import { UnsubscribeController } from './http/unsubscribe.controller';
import { RemoveSavedDealHandler, SaveDealHandler } from './commands/saved-deal.commands';
import { SetSubscriptionStatusHandler, SubscribeUserHandler } from './commands/subscription.commands';
import { EngagementQueries } from './queries/engagement.queries';
import { CardLinkQueries } from './queries/card-link.queries';
import { CardLinkAudit } from './audit/card-link-audit';
import { UserDealPreferencesFromViews } from './queries/user-deal-preferences';

/** Card links, saved deals and subscriptions: commands, handlers and queries. */
@Module({
  imports: [CatalogModule, AccountsModule, PurchasingModule],
  providers: [
    LinkCardsHandler,
    MoveCardLinkHandler,
    RedeemCardLinkTransactionHandler,
    ReportCardTransactionPhaseHandler,
    SaveDealHandler,
    RemoveSavedDealHandler,
    SubscribeUserHandler,
    SetSubscriptionStatusHandler,
    CardLinkQueries,
    EngagementQueries,
    CardLinkAudit,
    { provide: UserDealPreferences, useClass: UserDealPreferencesFromViews },
  ],
  exports: [CardLinkQueries, EngagementQueries, CardLinkAudit, UserDealPreferences],
})
export class EngagementModule {}

/** Engagement's HTTP routes. */
@Module({
  imports: [EngagementModule, AccountsModule, CatalogModule],
  controllers: [CardLinksController, SavedDealsController, SubscriptionsController, UnsubscribeController, TestHelpersController],
})
export class EngagementHttpModule {}
