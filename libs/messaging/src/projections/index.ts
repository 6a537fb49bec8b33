import type { Projection } from '@deals/kernel';
import { batchDetailsProjection } from './batch-details/batch-details.projection';

/** Every projection messaging owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const messagingProjections = [batchDetailsProjection] as Projection[];
export { batchDetailsProjection };
export type { BatchDetails } from './batch-details/batch-details.projection';
