import type { RegionView } from '../projections/regions/regions.projection';

/** A region as the API answers it. */
export const toRegion = (view: RegionView) => ({ id: view.region.id, active: view.region.active, name: view.region.name });
