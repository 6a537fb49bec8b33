import { AccountsModule } from '@deals/accounts';
import { CatalogModule } from '@deals/catalog';
import { Module } from '@nestjs/common';
import { LinkCardsHandler, MoveCardLinkHandler, RedeemCardLinkTransactionHandler } from './commands/card-link.commands';
import { CardLinksController } from './http/card-links.controller';
import { CardLinkQueries } from './queries/card-link.queries';
import { CardLinkAudit } from './audit/card-link-audit';

/** Card links, saved deals and subscriptions: commands, handlers and queries. */
@Module({
  imports: [CatalogModule, AccountsModule],
  providers: [LinkCardsHandler, MoveCardLinkHandler, RedeemCardLinkTransactionHandler, CardLinkQueries, CardLinkAudit],
  exports: [CardLinkQueries, CardLinkAudit],
})
export class EngagementModule {}

/** Engagement's HTTP routes. */
@Module({
  imports: [EngagementModule, AccountsModule, CatalogModule],
  controllers: [CardLinksController],
})
export class EngagementHttpModule {}
