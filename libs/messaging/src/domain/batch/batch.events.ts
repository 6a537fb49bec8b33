import type { DomainEvent } from '@deals/kernel';
import { createHash } from 'node:crypto';

export type BatchMode = 'suppress' | 'augment';

/** A batch as it is scheduled: the users kept, after the invalid and already scheduled ones were dropped. */
export interface BatchTerms {
  batchId: string;
  partnerId: string;
  dealId: string;
  userIds: string[];
  mode: BatchMode;
  /** ISO 8601 UTC, and its UTC date (`YYYY-MM-DD`). */
  sendAt: string;
  sendDay: string;
  createdAt: string;
}

/** On the partner's day stream: the batch exists from here, and its users are scheduled for the day. */
export type BatchScheduled = DomainEvent<'BatchScheduled', BatchTerms>;
/** On the day stream: cancelled while pending; its users are free for another batch of the day. */
export type BatchCancelled = DomainEvent<'BatchCancelled', { batchId: string; cancelledAt: string }>;
/** On the day stream: delivery has begun; from here it is no longer cancelled. */
export type BatchSendingStarted = DomainEvent<'BatchSendingStarted', { batchId: string; at: string }>;
export type BatchDayEvent = BatchScheduled | BatchCancelled | BatchSendingStarted;

/** On the batch's delivery stream: one recipient's outcome. `skipped`: the user was deleted (or had no email) by `send_at`. */
export type BatchRecipientSent = DomainEvent<'BatchRecipientSent', { batchId: string; userId: string; messageId: string; at: string }>;
export type BatchRecipientFailed = DomainEvent<
  'BatchRecipientFailed',
  { batchId: string; userId: string; reason: string; permanent: boolean; attempts: number; at: string }
>;
export type BatchRecipientSkipped = DomainEvent<'BatchRecipientSkipped', { batchId: string; userId: string; reason: string; at: string }>;
/** Every recipient tried: `processed` when all were sent (or skipped), `failed` when any failed. */
export type BatchDelivered = DomainEvent<
  'BatchDelivered',
  { batchId: string; status: 'processed' | 'failed'; sent: number; failed: number; skipped: number; at: string }
>;
export type BatchDeliveryEvent = BatchRecipientSent | BatchRecipientFailed | BatchRecipientSkipped | BatchDelivered;

/** A partner's batches of one `send_at` day, and the users they schedule. */
export const batchDayStream = (partnerId: string, day: string) =>
  `batchday-${createHash('sha256').update(`${partnerId}\n${day}`).digest('hex').slice(0, 40)}`;
export const batchDeliveryStream = (batchId: string) => `batch-${batchId}`;
