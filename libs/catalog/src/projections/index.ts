import { dealDetailsProjection } from './deal-details/deal-details.projection';
import { regionsProjection } from './regions/regions.projection';

/** Every projection the catalogue owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const catalogProjections = [regionsProjection, dealDetailsProjection];
