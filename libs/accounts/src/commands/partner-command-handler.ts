import {
  Clock,
  CommandCaller,
  Decider,
  DomainCommand,
  DomainEvent,
  EventStore,
  handleCommand,
  IdGenerator,
  LogPosition,
  sandboxOf,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { hashSecret, IssuedCredentials, issueCredentials, keyPrefix } from '../domain/partner/partner-credentials';
import { PartnerCommand, partnerDecider } from '../domain/partner/partner.decider';
import { INITIAL_KEY_ID, PartnerRole, partnerStream } from '../domain/partner/partner.events';
import { ApiKeyClaimed, apiKeyClaimDecider, apiKeyStream } from '../domain/partner/api-key-claim.decider';
import { v3UsernameClaimDecider, v3UsernameStream } from '../domain/partner/v3-username-claim.decider';
import { v3PasswordClaimDecider, v3PasswordStream } from '../domain/partner/v3-password-claim.decider';

/** A sandbox's account and its first test credentials, in clear only here. */
export interface OpenedSandbox extends IssuedCredentials {
  partnerId: string;
  keyId: string;
  prefix: string;
  position: LogPosition | null;
}

/** The registration of an account with fresh credentials: the event's data and the secrets, apart. */
export function registration(
  ids: IdGenerator,
  partnerId: string,
  name: string,
  role: PartnerRole,
  extra: { requestsPerMinute?: number; sandboxOf?: string },
) {
  const keyId = ids.next();
  const credentials = issueCredentials(name, undefined, extra.sandboxOf !== undefined);
  const data = {
    partnerId,
    name: name.trim(),
    role,
    apiKeyHash: hashSecret(credentials.apiKey),
    apiKeyId: keyId,
    apiKeyPrefix: keyPrefix(credentials.apiKey),
    username: credentials.username,
    passwordHash: hashSecret(credentials.password),
    ...(extra.requestsPerMinute !== undefined ? { requestsPerMinute: extra.requestsPerMinute } : {}),
    ...(extra.sandboxOf !== undefined ? { sandboxOf: extra.sandboxOf } : {}),
  };
  return { data, credentials, keyId };
}

/** Runs one command on a partner's stream with the service's clock and the caller in the events' metadata. */
@Injectable()
export abstract class PartnerCommandHandler {
  constructor(
    protected readonly store: EventStore,
    protected readonly clock: Clock,
    protected readonly ids: IdGenerator,
  ) {}

  /** Registers a live partner's sandbox with its first test credentials. */
  protected async openSandbox(livePartnerId: string, liveName: string, caller: CommandCaller): Promise<OpenedSandbox> {
    const partnerId = sandboxOf(livePartnerId);
    const { data, credentials, keyId } = registration(this.ids, partnerId, liveName, 'partner', { sandboxOf: livePartnerId });
    const position = await this.run({ type: 'RegisterPartner', data }, caller);
    return { partnerId, keyId, prefix: data.apiKeyPrefix, position, ...credentials };
  }

  protected async run(command: PartnerCommand, caller: CommandCaller): Promise<LogPosition | null> {
    const now = this.clock.now();
    const { position } = await handleCommand(this.store, partnerStream(command.data.partnerId), partnerDecider, command, {
      now,
      metadata: caller,
    });
    const { partnerId } = command.data;
    if (command.type === 'RegisterPartner') {
      await this.claimKey({ keyHash: command.data.apiKeyHash, partnerId, keyId: command.data.apiKeyId ?? INITIAL_KEY_ID }, caller, now);
      await this.claimUsername(command.data.username, partnerId, caller, now);
      await this.claimPassword(command.data.passwordHash, partnerId, caller, now);
    }
    if (command.type === 'IssuePartnerApiKey')
      await this.claimKey({ keyHash: command.data.keyHash, partnerId, keyId: command.data.keyId }, caller, now);
    return position;
  }

  /** As {@link claimKey}, for the partner's v3 username. */
  protected claimUsername(username: string, partnerId: string, caller: CommandCaller, now: Date): Promise<void> {
    const command = { type: 'ClaimV3Username', data: { usernameHash: hashSecret(username), partnerId } };
    return this.claim(
      v3UsernameStream(username),
      v3UsernameClaimDecider,
      command,
      caller,
      now,
      `the v3 password of partner ${partnerId} works once the views show it: its username's claim was not recorded`,
    );
  }

  /** As {@link claimKey}, for a new v3 password: it works the moment it is shown too. */
  protected claimPassword(passwordHash: string, partnerId: string, caller: CommandCaller, now: Date): Promise<void> {
    const command = { type: 'ClaimV3Password', data: { passwordHash, partnerId } };
    return this.claim(
      v3PasswordStream(passwordHash),
      v3PasswordClaimDecider,
      command,
      caller,
      now,
      `the new v3 password of partner ${partnerId} works once the views show it: its claim was not recorded`,
    );
  }

  /**
   * Records whose key a new key's hash is, once the partner's stream holds the key (a refused
   * command claims nothing): a process whose views do not show the key yet finds it in the log, so
   * a key works the moment it is shown. A claim that fails is not the command's failure (its secret
   * is shown only in its answer): the key then works once the views show it.
   */
  protected claimKey(data: ApiKeyClaimed['data'], caller: CommandCaller, now: Date): Promise<void> {
    return this.claim(
      apiKeyStream(data.keyHash),
      apiKeyClaimDecider,
      { type: 'ClaimApiKey', data },
      caller,
      now,
      `key ${data.keyId} of partner ${data.partnerId} works once the views show it: its claim was not recorded`,
    );
  }

  /** Runs a claim of a credential; its failure is logged as `unrecorded` says, never thrown. */
  private async claim<S, C extends DomainCommand, E extends DomainEvent>(
    streamId: string,
    decider: Decider<S, C, E>,
    command: C,
    caller: CommandCaller,
    now: Date,
    unrecorded: string,
  ): Promise<void> {
    try {
      await handleCommand(this.store, streamId, decider, command, { now, metadata: caller });
    } catch (error) {
      new Logger('PartnerCredentials').warn(`${unrecorded} (${String(error)})`);
    }
  }
}
