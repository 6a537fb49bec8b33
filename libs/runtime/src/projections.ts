import { accountsProjections } from '@deals/accounts/projections';
import { bulkJobProjections } from '@deals/bulk-jobs/projections';
import { catalogProjections } from '@deals/catalog/projections';
import { engagementProjections } from '@deals/engagement/projections';
import { eventFeedProjections } from '@deals/event-feed/projections';
import { defineDeadLetters, type Projection, type ViewStore } from '@deals/kernel';
import { messagingProjections } from '@deals/messaging/projections';
import { partnerSiteProjections } from '@deals/partner-site/projections';
import { purchasingProjections } from '@deals/purchasing/projections';
import { settlementProjections } from '@deals/settlement/projections';

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
  ...settlementProjections,
  ...bulkJobProjections,
  ...partnerSiteProjections,
  ...eventFeedProjections,
] as Projection[];

/** Defines each projection's view collection in the store, with its indexes and residence, and its dead letters' collection. */
export async function defineViews(views: ViewStore, projections: readonly Projection[]): Promise<void> {
  for (const projection of projections) await views.define(projection.name, projection.indexes, { keepInMemory: projection.keepInMemory });
  await defineDeadLetters(
    views,
    projections.map((p) => p.name),
  );
}
