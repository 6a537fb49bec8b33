import { deciderSpec } from '@deals/testing';
import { digestDecider } from './digest.decider';

const now = new Date('2026-07-10T12:00:00Z');
const data = {
  regionId: 'chicago',
  day: '2026-07-10',
  subscriptionId: 's1',
  partnerId: 'p1',
  userId: 'u1',
  outcome: 'sent' as const,
  reason: null,
  messageId: '<m>',
};

describe("a region's daily email of one day", () => {
  it('records each subscription once: no one gets two the same day', () => {
    const recorded = { type: 'DigestRecipientRecorded' as const, data: { ...data, at: now.toISOString() } };
    deciderSpec(digestDecider)([]).when({ type: 'RecordDigestRecipient', data }, now).then([recorded]);
    deciderSpec(digestDecider)([recorded])
      .when({ type: 'RecordDigestRecipient', data: { ...data, outcome: 'failed', reason: 'x' } }, now)
      .then([]);
  });
});
