import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand } from '@deals/kernel';

/** Whose key a key hash is: the partner and the key's id there (its credential events stay on the partner's stream). */
export type ApiKeyClaimed = DomainEvent<'ApiKeyClaimed', { keyHash: string; partnerId: string; keyId: string }>;

export type ClaimApiKey = DomainCommand<'ClaimApiKey', ApiKeyClaimed['data']>;

/**
 * One stream a key, named by its hash: how a process whose views do not know a key yet (one shown
 * a moment ago) finds its partner in the log with one read by stream id, where a wrong key finds
 * no stream at all. The partner's own stream stays what says whether the key works.
 */
export const apiKeyStream = (keyHash: string) => `apikey-${keyHash}`;

export interface ApiKeyClaim {
  owner: { partnerId: string; keyId: string } | null;
}

export const apiKeyClaimDecider: Decider<ApiKeyClaim, ClaimApiKey, ApiKeyClaimed> = {
  initialState: () => ({ owner: null }),
  decide(command, claim) {
    switch (command.type) {
      case 'ClaimApiKey': {
        const { partnerId, keyId } = command.data;
        if (claim.owner === null) return [{ type: 'ApiKeyClaimed', data: command.data }];
        if (claim.owner.partnerId === partnerId && claim.owner.keyId === keyId) return [];
        // 192 random bits: two keys with one hash do not happen; the first claim stands.
        throw new Error('the key hash is claimed already');
      }
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(claim, event) {
    switch (event.type) {
      case 'ApiKeyClaimed':
        return { owner: { partnerId: event.data.partnerId, keyId: event.data.keyId } };
      default:
        return ignoredEvent(event.type, claim);
    }
  },
};
