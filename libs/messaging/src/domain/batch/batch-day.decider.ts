import { Decider, DomainCommand, ignoredEvent, NotFound, unknownCommand, ValidationFailed, ValidationIssue } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import type { BatchDayEvent, BatchTerms } from './batch.events';

/** User ids a partner may have scheduled on one `send_at` day (docs/decisions.md "Targeted-email batches"). */
export const SCHEDULED_PER_DAY = 10_000;

/** `userIds`: the ids of the request that name live users of the partner, in order (the others were dropped already). */
export type ScheduleBatch = DomainCommand<'ScheduleBatch', Omit<BatchTerms, 'createdAt'>>;
export type CancelBatch = DomainCommand<'CancelBatch', { batchId: string; partnerId: string }>;
export type StartSendingBatch = DomainCommand<'StartSendingBatch', { batchId: string }>;
export type BatchDayCommand = ScheduleBatch | CancelBatch | StartSendingBatch;

export type BatchDayStatus = 'pending' | 'cancelled' | 'sending';

export interface ScheduledBatch {
  terms: BatchTerms;
  status: BatchDayStatus;
}

/** A partner's `send_at` day: its batches, and which batch holds each user scheduled that day. */
export interface BatchDay {
  batches: ImmutableMap<string, ScheduledBatch>;
  users: ImmutableMap<string, string>;
}

const issue = (field: string, message: string): ValidationIssue => ({ type: 'invalid', resource: 'batch', field, message });

/** The message for a batch that can no longer be cancelled. */
export const ALREADY_PROCESSED = 'is already processed, cannot be cancelled';

/**
 * One user in one batch per partner and `send_at` day: a user already in another live
 * batch of the day is dropped from a new one, decided on the day's stream, so two batches made at
 * once never both keep a user. A cancelled batch gives its users back.
 */
export const batchDayDecider: Decider<BatchDay, BatchDayCommand, BatchDayEvent> = {
  initialState: () => ({ batches: ImmutableMap(), users: ImmutableMap() }),
  decide(command, day, now) {
    switch (command.type) {
      case 'ScheduleBatch': {
        const terms = command.data;
        if (day.batches.has(terms.batchId)) return [];
        const kept = [...new Set(terms.userIds)].filter((id) => !day.users.has(id));
        if (!kept.length) throw new ValidationFailed([issue('user_ids', 'are all already scheduled for that day')]);
        if (day.users.size + kept.length > SCHEDULED_PER_DAY)
          throw new ValidationFailed([
            issue('user_ids', `would schedule more than ${SCHEDULED_PER_DAY} users for that day (${day.users.size} are scheduled already)`),
          ]);
        return [{ type: 'BatchScheduled', data: { ...terms, userIds: kept, createdAt: now.toISOString() } }];
      }
      case 'CancelBatch': {
        const batch = day.batches.get(command.data.batchId);
        if (!batch || batch.terms.partnerId !== command.data.partnerId) throw new NotFound('batch not found');
        if (batch.status === 'cancelled') return [];
        if (batch.status === 'sending') throw new ValidationFailed([issue('batch_id', ALREADY_PROCESSED)]);
        return [{ type: 'BatchCancelled', data: { batchId: command.data.batchId, cancelledAt: now.toISOString() } }];
      }
      case 'StartSendingBatch': {
        const batch = day.batches.get(command.data.batchId);
        if (!batch || batch.status === 'cancelled' || batch.status === 'sending') return [];
        return [{ type: 'BatchSendingStarted', data: { batchId: command.data.batchId, at: now.toISOString() } }];
      }
      default:
        return unknownCommand(command);
    }
  },
  evolve(day, event) {
    switch (event.type) {
      case 'BatchScheduled': {
        let users = day.users;
        for (const id of event.data.userIds) users = users.set(id, event.data.batchId);
        return { batches: day.batches.set(event.data.batchId, { terms: event.data, status: 'pending' }), users };
      }
      case 'BatchCancelled': {
        const batch = day.batches.get(event.data.batchId);
        if (!batch) return day;
        let users = day.users;
        for (const id of batch.terms.userIds) if (users.get(id) === event.data.batchId) users = users.delete(id);
        return { batches: day.batches.set(event.data.batchId, { ...batch, status: 'cancelled' }), users };
      }
      case 'BatchSendingStarted': {
        const batch = day.batches.get(event.data.batchId);
        return batch ? { ...day, batches: day.batches.set(event.data.batchId, { ...batch, status: 'sending' }) } : day;
      }
      default:
        return ignoredEvent(event, day);
    }
  },
};
