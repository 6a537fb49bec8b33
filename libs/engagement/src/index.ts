/** Engagement: card links, saved deals, subscriptions. */
import type { Projection } from '@deals/kernel';
export { EngagementHttpModule, EngagementModule } from './engagement.module';

export { CardLinkAudit } from './audit/card-link-audit';
export type { CardLinkAuditEntry } from './audit/card-link-audit';
export { CARD_LINK_DETAILS } from './projections/card-link-details/card-link-details.projection';

import { cardLinkDetailsProjection } from './projections/card-link-details/card-link-details.projection';
/** Every projection engagement owns. */
export const engagementProjections: Projection[] = [cardLinkDetailsProjection as Projection];
