import { Module } from '@nestjs/common';
import { ImportDealHandler, ImportRegionHandler, TransitionDealHandler } from './commands/catalog.handlers';
import { DealsController } from './http/deals.controller';
import { DealV1Bodies } from './http/deal-v1-bodies';
import { RegionsController } from './http/regions.controller';
import { CatalogQueries } from './queries/catalog.queries';

/** Deals and regions: commands, handlers and queries, without HTTP (the CLI uses this). */
@Module({
  providers: [ImportRegionHandler, ImportDealHandler, TransitionDealHandler, CatalogQueries],
  exports: [CatalogQueries],
})
export class CatalogModule {}

/** The catalogue's HTTP routes. */
@Module({ imports: [CatalogModule], controllers: [RegionsController, DealsController], providers: [DealV1Bodies] })
export class CatalogHttpModule {}
