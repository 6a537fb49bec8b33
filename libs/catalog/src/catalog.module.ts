import { Module } from '@nestjs/common';
import { ImportDealHandler, ImportRegionHandler, TransitionDealHandler } from './commands/catalog.handlers';
import { DealPicturesController } from './http/deal-pictures.controller';
import { DealsController } from './http/deals.controller';
import { DealV1Bodies } from './http/deal-v1-bodies';
import { DealV3Bodies } from './http/deal-v3-bodies';
import { DealsV3Controller } from './http/deals-v3.controller';
import { DealSearch } from './queries/deal-search';
import { DealListsController } from './http/deal-lists.controller';
import { RegionResolver } from './queries/region-resolver';
import { Geography } from './geography/geography';
import { RegionsController } from './http/regions.controller';
import { CatalogQueries } from './queries/catalog.queries';

/** Deals and regions: commands, handlers and queries, without HTTP (the CLI uses this). */
@Module({
  providers: [
    ImportRegionHandler,
    ImportDealHandler,
    TransitionDealHandler,
    CatalogQueries,
    RegionResolver,
    { provide: Geography, useFactory: () => new Geography() },
  ],
  exports: [CatalogQueries, RegionResolver, Geography],
})
export class CatalogModule {}

/** The catalogue's HTTP routes. */
@Module({
  imports: [CatalogModule],
  controllers: [RegionsController, DealsController, DealsV3Controller, DealListsController, DealPicturesController],
  providers: [DealV1Bodies, DealV3Bodies, DealSearch],
})
export class CatalogHttpModule {}
