import { Decider, DomainCommand } from '@deals/kernel';
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

/** Who has been tried, and how it went; `finished` once the batch's status is decided. */
export interface BatchDelivery {
  tried: ImmutableSet<string>;
  sent: number;
  failed: number;
  skipped: number;
  finished: 'processed' | 'failed' | null;
}

/**
 * A batch's delivery: one event per recipient, so a delivery that stopped half-way resumes with
 * the users not yet tried; each recipient is recorded once. Finished: `failed` when any recipient
 * failed, else `processed`.
 */
export const batchDeliveryDecider: Decider<BatchDelivery, BatchDeliveryCommand, BatchDeliveryEvent> = {
  initialState: () => ({ tried: ImmutableSet(), sent: 0, failed: 0, skipped: 0, finished: null }),
  decide(command, delivery, now) {
    const at = now.toISOString();
    if (command.type === 'FinishDelivery') {
      if (delivery.finished) return [];
      const { sent, failed, skipped } = delivery;
      return [
        {
          type: 'BatchDelivered',
          data: { batchId: command.data.batchId, status: failed ? 'failed' : 'processed', sent, failed, skipped, at },
        },
      ];
    }
    const d = command.data;
    if (delivery.tried.has(d.userId) || delivery.finished) return [];
    if (d.outcome === 'sent')
      return [{ type: 'BatchRecipientSent', data: { batchId: d.batchId, userId: d.userId, messageId: d.messageId, at } }];
    if (d.outcome === 'skipped')
      return [{ type: 'BatchRecipientSkipped', data: { batchId: d.batchId, userId: d.userId, reason: d.reason, at } }];
    return [
      {
        type: 'BatchRecipientFailed',
        data: { batchId: d.batchId, userId: d.userId, reason: d.reason, permanent: d.permanent, attempts: d.attempts, at },
      },
    ];
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
        return { ...delivery, finished: event.data.status };
    }
  },
};
