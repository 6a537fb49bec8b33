import { AccountsModule } from '@deals/accounts';
import { CatalogModule } from '@deals/catalog';
import { Module } from '@nestjs/common';

/** Card links, saved deals and subscriptions: commands, handlers and queries. */
@Module({
  imports: [CatalogModule, AccountsModule],
  providers: [],
  exports: [],
})
export class EngagementModule {}

/** Engagement's HTTP routes. */
@Module({
  imports: [EngagementModule, AccountsModule, CatalogModule],
  controllers: [],
})
export class EngagementHttpModule {}
