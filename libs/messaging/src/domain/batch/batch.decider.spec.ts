import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { ALREADY_PROCESSED, batchDayDecider, SCHEDULED_PER_DAY, ScheduleBatch } from './batch-day.decider';
import { batchDeliveryDecider } from './batch-delivery.decider';
import type { BatchDayEvent } from './batch.events';
import { dealAndTimeIssues, isTomorrow } from './batch-rules';

const now = new Date('2026-06-15T12:00:00Z');
const at = now.toISOString();
const terms = (batchId: string, userIds: string[]): ScheduleBatch['data'] => ({
  batchId,
  partnerId: 'p1',
  dealId: 'd1',
  userIds,
  mode: 'suppress',
  sendAt: '2026-06-16T09:00:00.000Z',
  sendDay: '2026-06-16',
});
const scheduled = (batchId: string, userIds: string[]): BatchDayEvent => ({
  type: 'BatchScheduled',
  data: { ...terms(batchId, userIds), createdAt: at },
});
const day = deciderSpec(batchDayDecider);

describe("a partner's send_at day (one batch a user, 10,000 users a day)", () => {
  it('keeps the users not in another batch of the day, once each', () => {
    day([scheduled('b1', ['u1', 'u2'])])
      .when({ type: 'ScheduleBatch', data: terms('b2', ['u2', 'u3', 'u3', 'u4']) }, now)
      .then([scheduled('b2', ['u3', 'u4'])]);
  });

  it('refuses a batch whose users are all scheduled that day: "are all already scheduled for that day"', () => {
    day([scheduled('b1', ['u1', 'u2'])])
      .when({ type: 'ScheduleBatch', data: terms('b2', ['u2', 'u1']) }, now)
      .thenThrows(ValidationFailed, {
        issues: [{ type: 'invalid', resource: 'batch', field: 'user_ids', message: 'are all already scheduled for that day' }],
      });
  });

  it(`holds at most ${SCHEDULED_PER_DAY} users a day`, () => {
    const full = Array.from({ length: 10 }, (_, b) =>
      scheduled(
        `b${b}`,
        Array.from({ length: 1000 }, (_, i) => `u${b}-${i}`),
      ),
    );
    day(full.slice(0, 9))
      .when(
        {
          type: 'ScheduleBatch',
          data: terms(
            'b9',
            Array.from({ length: 1000 }, (_, i) => `n${i}`),
          ),
        },
        now,
      )
      .then([
        scheduled(
          'b9',
          Array.from({ length: 1000 }, (_, i) => `n${i}`),
        ),
      ]);
    day(full)
      .when({ type: 'ScheduleBatch', data: terms('bx', ['new']) }, now)
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'user_ids' })] });
  });

  it('gives a cancelled batch’s users back; a cancel twice is one', () => {
    const cancelled: BatchDayEvent = { type: 'BatchCancelled', data: { batchId: 'b1', cancelledAt: at } };
    day([scheduled('b1', ['u1'])])
      .when({ type: 'CancelBatch', data: { batchId: 'b1', partnerId: 'p1' } }, now)
      .then([cancelled]);
    day([scheduled('b1', ['u1']), cancelled])
      .when({ type: 'CancelBatch', data: { batchId: 'b1', partnerId: 'p1' } }, now)
      .then([]);
    day([scheduled('b1', ['u1']), cancelled])
      .when({ type: 'ScheduleBatch', data: terms('b2', ['u1']) }, now)
      .then([scheduled('b2', ['u1'])]);
  });

  it('never cancels a batch being sent or sent, and never starts sending a cancelled one', () => {
    const sending: BatchDayEvent = { type: 'BatchSendingStarted', data: { batchId: 'b1', at } };
    day([scheduled('b1', ['u1']), sending])
      .when({ type: 'CancelBatch', data: { batchId: 'b1', partnerId: 'p1' } }, now)
      .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'batch_id', message: ALREADY_PROCESSED })] });
    day([scheduled('b1', ['u1'])])
      .when({ type: 'StartSendingBatch', data: { batchId: 'b1' } }, now)
      .then([sending]);
    day([scheduled('b1', ['u1']), { type: 'BatchCancelled', data: { batchId: 'b1', cancelledAt: at } }])
      .when({ type: 'StartSendingBatch', data: { batchId: 'b1' } }, now)
      .then([]);
    day([scheduled('b1', ['u1'])])
      .when({ type: 'CancelBatch', data: { batchId: 'b1', partnerId: 'p2' } }, now)
      .thenThrows(NotFound);
  });
});

describe('batch delivery', () => {
  const delivery = deciderSpec(batchDeliveryDecider);
  const sent = { type: 'BatchRecipientSent' as const, data: { batchId: 'b1', userId: 'u1', messageId: '<m>', at } };
  it('records each recipient once, and finishes processed, or failed when any failed', () => {
    delivery([])
      .when({ type: 'RecordRecipient', data: { batchId: 'b1', userId: 'u1', outcome: 'sent', messageId: '<m>' } }, now)
      .then([sent]);
    delivery([sent])
      .when({ type: 'RecordRecipient', data: { batchId: 'b1', userId: 'u1', outcome: 'sent', messageId: '<m>' } }, now)
      .then([]);
    delivery([sent])
      .when({ type: 'FinishDelivery', data: { batchId: 'b1' } }, now)
      .then([{ type: 'BatchDelivered', data: { batchId: 'b1', status: 'processed', sent: 1, failed: 0, skipped: 0, at } }]);
    const failed = {
      type: 'BatchRecipientFailed' as const,
      data: { batchId: 'b1', userId: 'u2', reason: 'x', permanent: true, attempts: 1, at },
    };
    delivery([sent, failed])
      .when({ type: 'FinishDelivery', data: { batchId: 'b1' } }, now)
      .then([{ type: 'BatchDelivered', data: { batchId: 'b1', status: 'failed', sent: 1, failed: 1, skipped: 0, at } }]);
  });
});

describe('the rules of send_at and the deal', () => {
  it("takes tomorrow (UTC) from tonight's midnight, inclusive, to tomorrow's, exclusive", () => {
    expect(isTomorrow(new Date('2026-06-15T23:59:59.999Z'), now)).toBe(false);
    expect(isTomorrow(new Date('2026-06-16T00:00:00Z'), now)).toBe(true);
    expect(isTomorrow(new Date('2026-06-16T23:59:59.999Z'), now)).toBe(true);
    expect(isTomorrow(new Date('2026-06-17T00:00:00Z'), now)).toBe(false);
    expect(isTomorrow(new Date('2026-06-16T00:00:00Z'), new Date('2026-06-15T23:59:59Z'))).toBe(true);
    expect(isTomorrow(new Date('2026-06-16T00:00:00Z'), new Date('2026-06-16T00:00:00Z'))).toBe(false);
  });
  it('names every refusal of the deal and the time, word for word', () => {
    const messages = (deal: Parameters<typeof dealAndTimeIssues>[0], sendAt: string) =>
      dealAndTimeIssues(deal, new Date(sendAt), now).map((i) => [i.field, i.message]);
    const running = {
      found: true as const,
      state: 'in-flight',
      startAt: Date.parse('2026-06-16T06:00:00Z'),
      endAt: Date.parse('2026-06-16T10:00:00Z'),
    };
    expect(messages(running, '2026-06-16T08:00:00Z')).toEqual([]);
    expect(messages({ found: false }, '2026-06-18T08:00:00Z')).toEqual([
      ['deal_id', 'unknown deal'],
      ['send_at', 'must be tomorrow'],
    ]);
    expect(messages({ ...running, state: 'paused' }, '2026-06-16T08:00:00Z')).toEqual([
      ['deal_id', "deal's status must be in-flight or approved"],
    ]);
    expect(messages({ ...running, state: 'approved' }, '2026-06-16T05:00:00Z')).toEqual([['send_at', "must be after deal's start time"]]);
    expect(messages(running, '2026-06-16T10:00:00Z')).toEqual([['send_at', "must be before deal's end time"]]);
  });
});
