/** The catalogue: deals, regions and their workflow. */
export { CatalogHttpModule, CatalogModule } from './catalog.module';
export { ImportDeal, ImportRegion, TransitionDeal } from './commands/catalog.commands';
export type { Appended } from './commands/catalog.commands';
export type { DealLocation, DealTerms, WorkflowState, DealType, FulfillmentMethod } from './domain/deal/deal-terms';
export { DEAL_TYPES, FULFILLMENT_METHODS, WORKFLOW_STATES } from './domain/deal/deal-terms';
export type { RegionTerms } from './domain/region/region.events';
export { dealDetailsProjection, DEAL_DETAILS, unitsLeftAt } from './projections/deal-details/deal-details.projection';
export type { DealDetails } from './projections/deal-details/deal-details.projection';
export { regionsProjection, REGIONS } from './projections/regions/regions.projection';
export { CatalogQueries } from './queries/catalog.queries';
export { RegionResolver } from './queries/region-resolver';
export { NOT_PUBLIC_STATES } from './queries/regional-filter';
export { UserDealPreferences } from './queries/user-deal-preferences.port';
export type { UserDealPreference } from './queries/user-deal-preferences.port';
export { CatalogLinks } from './queries/catalog-links';
export { toDealV1, dealClockFacts } from './http/deal-v1.answers';
export { effectiveStateAt } from './domain/deal/deal-workflow';

export { catalogProjections } from './projections';
