import { assertJobId } from '@deals/kernel';

// BullMQ throws on an id with one ':', accepts one with exactly two, and throws on an all-digit
// id; our rule refuses every ':' so that no id works on one adapter and fails on the other.
const uuid = '0b6e1a52-7f3c-4c1e-9d55-2f0e8a7c4b13';

describe('scheduled job ids', () => {
  it.each([`release-hold-${uuid}`, `send-batch-${uuid}`, 'send_batch-x'])('accepts %s', (id) => {
    expect(() => assertJobId(id)).not.toThrow();
  });

  it.each(['release-hold:abc', 'a:b:c', `hold-expiry:${uuid}`, '123', '0', '', 'release hold', 'hold/1'])('refuses %j', (id) => {
    expect(() => assertJobId(id)).toThrow(/invalid job id/);
  });
});
