import { Decider, DomainCommand, ignoredEvent, unknownCommand } from '@deals/kernel';
import { Set as ImmutableSet } from 'immutable';
import type { BatchDeliveryEvent } from './batch.events';

export type RecordRecipient = DomainCommand<
  'RecordRecipient',
  | { batchId: string; userId: string; outcome: 'sent'; messageId: string }
  | { batchId: string; userId: string; outcome: 'failed'; reason: string; permanent: boolean; attempts: number }
  | { batchId: string; userId: string; outcome: 'skipped'; reason: string }
>;
export type FinishDelivery = DomainCommand<'FinishDelivery', { batchId: string }>;
export type BatchDeliveryCommand = RecordRecipient | FinishDelivery;

/** Who has been tried, and how it went; delivering until the batch's status is decided. */
export interface BatchDelivery {
  status: 'delivering' | 'processed' | 'failed';
  tried: ImmutableSet<string>;
  sent: number;
  failed: number;
  skipped: number;
}

/**
 * A batch's delivery: one event per recipient, so a delivery that stopped half-way resumes with
 * the users not yet tried; each recipient is recorded once. Finished: `failed` when any recipient
 * failed, else `processed`.
 */
export const batchDeliveryDecider: Decider<BatchDelivery, BatchDeliveryCommand, BatchDeliveryEvent> = {
  initialState: () => ({ status: 'delivering', tried: ImmutableSet(), sent: 0, failed: 0, skipped: 0 }),
  decide(command, delivery, now) {
    const at = now.toISOString();
    switch (command.type) {
      case 'RecordRecipient': {
        const { batchId, userId, ...d } = command.data;
        if (delivery.tried.has(userId) || delivery.status !== 'delivering') return [];
        if (d.outcome === 'sent') return [{ type: 'BatchRecipientSent', data: { batchId, userId, messageId: d.messageId, at } }];
        if (d.outcome === 'skipped') return [{ type: 'BatchRecipientSkipped', data: { batchId, userId, reason: d.reason, at } }];
        const { reason, permanent, attempts } = d;
        return [{ type: 'BatchRecipientFailed', data: { batchId, userId, reason, permanent, attempts, at } }];
      }
      case 'FinishDelivery': {
        if (delivery.status !== 'delivering') return [];
        const { sent, failed, skipped } = delivery;
        const status = failed ? 'failed' : 'processed';
        return [{ type: 'BatchDelivered', data: { batchId: command.data.batchId, status, sent, failed, skipped, at } }];
      }
      default:
        return unknownCommand(command);
    }
  },
  evolve(delivery, event) {
    switch (event.type) {
      case 'BatchRecipientSent':
        return { ...delivery, tried: delivery.tried.add(event.data.userId), sent: delivery.sent + 1 };
      case 'BatchRecipientFailed':
        return { ...delivery, tried: delivery.tried.add(event.data.userId), failed: delivery.failed + 1 };
      case 'BatchRecipientSkipped':
        return { ...delivery, tried: delivery.tried.add(event.data.userId), skipped: delivery.skipped + 1 };
      case 'BatchDelivered':
        return { ...delivery, status: event.data.status };
      default:
        return ignoredEvent(event, delivery);
    }
  },
};
