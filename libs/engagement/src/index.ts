/** Engagement: card links, saved deals, subscriptions. */
import type { Projection } from '@deals/kernel';
export { EngagementHttpModule, EngagementModule } from './engagement.module';

/** Every projection engagement owns. */
export const engagementProjections: Projection[] = [];
