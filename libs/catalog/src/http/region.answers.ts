import type { RegionView } from '../projections/regions/regions.projection';

/** Part 2.12. */
export const toRegion = (view: RegionView) => ({ id: view.region.id, active: view.region.active, name: view.region.name });
