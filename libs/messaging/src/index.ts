/** Messaging: targeted-email batches and the daily regional email. */
export { MessagingHttpModule, MessagingModule } from './messaging.module';
export { BatchDelivery } from './commands/batch-delivery';
export { DeliverDueBatches } from './reactions/deliver-due-batches.reaction';
export { DailyDigest } from './commands/daily-digest';
export { DailyDigestJobs, DigestSettings } from './reactions/daily-digest.reaction';
export { localDate } from './domain/digest/local-time';
export { BATCH_DETAILS } from './projections/batch-details/batch-details.projection';
export type { BatchDetails } from './projections/batch-details/batch-details.projection';
export { BatchQueries } from './queries/batch.queries';

export { messagingProjections } from './projections';
/** A batch in its API shape (the partner event feed renders it too). */
export { toBatch } from './http/batches.answers';
export { batchDeliveryStream } from './domain/batch/batch.events';
export { OwnAddresses, UserMail } from './sandbox-mail/user-mail';
export { SandboxMailQueries } from './queries/sandbox-mail.queries';
export { MESSAGING_PERSONAL_FIELDS } from './domain/sandbox-mail/sandbox-mail-personal-data';
export { SANDBOX_MAIL_KEPT_A_DAY, SANDBOX_MAIL_SENT_A_DAY } from './domain/sandbox-mail/sandbox-mail.decider';
export { toSandboxMail, toSandboxMailSummary } from './http/sandbox-mail.answers';
