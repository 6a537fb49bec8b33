import { Decider, DomainCommand, DomainError, ignoredEvent, unknownCommand } from '@deals/kernel';
import type { AttemptRecord, WebhookDeliveryAttempted, WebhookDeliveryEvent } from './webhook-delivery.events';

export interface WebhookDeliveryState {
  attempts: number;
  finished: boolean;
}

/** The attempt was recorded already (by another process, or before a restart). */
export class AttemptAlreadyRecorded extends DomainError {
  readonly httpStatus = 409;
  readonly errorType = 'attempt_already_recorded';
}

export type RecordAttempt = DomainCommand<
  'RecordAttempt',
  AttemptRecord & {
    deliveryId: string;
    endpointId: string;
    eventId: string;
    partnerId: string;
    succeeded: boolean;
    /** No more attempts whatever the schedule says (410 Gone, the endpoint disabled or deleted). */
    final: boolean;
    /** The waits before each retry (the service's schedule): attempt n failing waits `delaysMs[n - 1]`. */
    delaysMs: readonly number[];
  }
>;

/**
 * One event's delivery to one endpoint: its attempts, each recorded once, and when the next is due.
 * After a failure the next comes after the schedule's wait; when the schedule runs out it failed.
 */
export const webhookDeliveryDecider: Decider<WebhookDeliveryState, RecordAttempt, WebhookDeliveryEvent> = {
  initialState: () => ({ attempts: 0, finished: false }),
  decide(command, state) {
    switch (command.type) {
      case 'RecordAttempt': {
        const { data } = command;
        if (state.finished || data.attempt !== state.attempts + 1)
          // eslint-disable-next-line no-restricted-syntax -- ids and counts of ours, never answered
          throw new AttemptAlreadyRecorded(`attempt ${data.attempt} of ${data.deliveryId} was recorded`);
        const { deliveryId, endpointId, eventId, partnerId, attempt, at, status, latencyMs, responseExcerpt, error } = data;
        const wait = data.succeeded || data.final ? undefined : data.delaysMs[attempt - 1];
        const outcome: WebhookDeliveryAttempted['data']['outcome'] = data.succeeded
          ? 'succeeded'
          : wait === undefined
            ? 'failed'
            : 'retrying';
        const nextAttemptAt = wait === undefined ? null : new Date(Date.parse(at) + wait).toISOString();
        const recorded = { deliveryId, endpointId, eventId, partnerId, attempt, at, status, latencyMs, responseExcerpt, error };
        return [{ type: 'WebhookDeliveryAttempted', data: { ...recorded, outcome, nextAttemptAt } }];
      }
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookDeliveryAttempted':
        return { attempts: event.data.attempt, finished: event.data.outcome !== 'retrying' };
      default:
        return ignoredEvent(event.type, state);
    }
  },
};
