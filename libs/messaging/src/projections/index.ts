import type { Projection } from '@deals/kernel';
import { batchDetailsProjection } from './batch-details/batch-details.projection';
import { sandboxMailProjection } from './sandbox-mail/sandbox-mail.projection';

/** Every projection messaging owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const messagingProjections = [batchDetailsProjection, sandboxMailProjection] as Projection[];
export { batchDetailsProjection, sandboxMailProjection };
export type { BatchDetails } from './batch-details/batch-details.projection';
