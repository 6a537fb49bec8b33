import { accountsProjections } from '@deals/accounts';
import { catalogProjections } from '@deals/catalog';
import { engagementProjections } from '@deals/engagement';
import type { Projection } from '@deals/kernel';
import { messagingProjections } from '@deals/messaging';
import { purchasingProjections } from '@deals/purchasing';

/** Every read model the service keeps, by name. */
export const ALL_PROJECTIONS: Projection[] = [
  ...accountsProjections,
  ...catalogProjections,
  ...purchasingProjections,
  ...engagementProjections,
  ...messagingProjections,
] as Projection[];
