/** Messaging: targeted-email batches and the daily regional email. */
import type { Projection } from '@deals/kernel';
import { batchDetailsProjection } from './projections/batch-details/batch-details.projection';
export { MessagingHttpModule, MessagingModule } from './messaging.module';
export { BatchDelivery } from './commands/batch-delivery';
export { DeliverDueBatches } from './reactions/deliver-due-batches.reaction';
export { DailyDigest } from './commands/daily-digest';
export { DailyDigestJobs, DigestSettings } from './reactions/daily-digest.reaction';
export { localDate } from './domain/digest/local-time';
export { BATCH_DETAILS } from './projections/batch-details/batch-details.projection';

/** Every projection messaging owns. */
export const messagingProjections = [batchDetailsProjection] as Projection[];
