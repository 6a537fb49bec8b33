import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand } from '@deals/kernel';
import { Set as ImmutableSet } from 'immutable';

/** One subscription's daily email of one region's local day: sent, skipped (suppressed, user gone), or failed. */
export type DigestRecipientRecorded = DomainEvent<
  'DigestRecipientRecorded',
  {
    regionId: string;
    day: string;
    subscriptionId: string;
    partnerId: string;
    userId: string;
    outcome: 'sent' | 'skipped' | 'failed';
    reason: string | null;
    messageId: string | null;
    at: string;
  }
>;
export type DigestEvent = DigestRecipientRecorded;

export type RecordDigestRecipient = DomainCommand<'RecordDigestRecipient', Omit<DigestRecipientRecorded['data'], 'at'>>;

/** The subscriptions whose email of that day has been tried: each at most once, also across a restart. */
export interface Digest {
  tried: ImmutableSet<string>;
}

export const digestStream = (regionId: string, day: string) => `digest-${regionId}-${day}`;

export const digestDecider: Decider<Digest, RecordDigestRecipient, DigestEvent> = {
  initialState: () => ({ tried: ImmutableSet() }),
  decide(command, digest, now) {
    switch (command.type) {
      case 'RecordDigestRecipient':
        if (digest.tried.has(command.data.subscriptionId)) return [];
        return [{ type: 'DigestRecipientRecorded', data: { ...command.data, at: now.toISOString() } }];
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(digest, event) {
    switch (event.type) {
      case 'DigestRecipientRecorded':
        return { tried: digest.tried.add(event.data.subscriptionId) };
      default:
        return ignoredEvent(event.type, digest);
    }
  },
};
