import { accountsProjections } from '@deals/accounts/projections';
import { catalogProjections } from '@deals/catalog/projections';
import { engagementProjections } from '@deals/engagement/projections';
import type { Projection } from '@deals/kernel';
import { messagingProjections } from '@deals/messaging/projections';
import { purchasingProjections } from '@deals/purchasing/projections';

/**
 * Every read model the service keeps, by name: from each context's projections entry (free of HTTP
 * and Nest), so that the CLI's quick status loads no more than the projections.
 */
export const ALL_PROJECTIONS: Projection[] = [
  ...accountsProjections,
  ...catalogProjections,
  ...purchasingProjections,
  ...engagementProjections,
  ...messagingProjections,
] as Projection[];
