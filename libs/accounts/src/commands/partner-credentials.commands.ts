import {
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  IdGenerator,
  isSandbox,
  loadAggregate,
  LogPosition,
  NotFound,
  sandboxOf,
  ValidationFailed,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { hashSecret, IssuedCredentials, issueCredentials, keyPrefix, newApiKey, newPassword } from '../domain/partner/partner-credentials';
import { PartnerCommand, partnerDecider } from '../domain/partner/partner.decider';
import { INITIAL_KEY_ID, PartnerRole, partnerStream } from '../domain/partner/partner.events';
import { ApiKeyClaimed, apiKeyClaimDecider, apiKeyStream } from '../domain/partner/api-key-claim.decider';
import { v3UsernameClaimDecider, v3UsernameStream } from '../domain/partner/v3-username-claim.decider';
import { v3PasswordClaimDecider, v3PasswordStream } from '../domain/partner/v3-password-claim.decider';

/** Runs one command on a partner's stream with the service's clock and the caller in the events' metadata. */
@Injectable()
abstract class PartnerCommandHandler {
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
  protected async claimUsername(username: string, partnerId: string, caller: CommandCaller, now: Date): Promise<void> {
    try {
      await handleCommand(
        this.store,
        v3UsernameStream(username),
        v3UsernameClaimDecider,
        { type: 'ClaimV3Username', data: { usernameHash: hashSecret(username), partnerId } },
        { now, metadata: caller },
      );
    } catch (error) {
      new Logger('PartnerCredentials').warn(
        `the v3 password of partner ${partnerId} works once the views show it: its username's claim was not recorded (${String(error)})`,
      );
    }
  }

  /** As {@link claimKey}, for a new v3 password: it works the moment it is shown too. */
  protected async claimPassword(passwordHash: string, partnerId: string, caller: CommandCaller, now: Date): Promise<void> {
    try {
      await handleCommand(
        this.store,
        v3PasswordStream(passwordHash),
        v3PasswordClaimDecider,
        { type: 'ClaimV3Password', data: { passwordHash, partnerId } },
        { now, metadata: caller },
      );
    } catch (error) {
      new Logger('PartnerCredentials').warn(
        `the new v3 password of partner ${partnerId} works once the views show it: its claim was not recorded (${String(error)})`,
      );
    }
  }

  /**
   * Records whose key a new key's hash is, once the partner's stream holds the key (a refused
   * command claims nothing): a process whose views do not show the key yet finds it in the log, so
   * a key works the moment it is shown. A claim that fails is not the command's failure (its secret
   * is shown only in its answer): the key then works once the views show it.
   */
  protected async claimKey(data: ApiKeyClaimed['data'], caller: CommandCaller, now: Date): Promise<void> {
    try {
      await handleCommand(
        this.store,
        apiKeyStream(data.keyHash),
        apiKeyClaimDecider,
        { type: 'ClaimApiKey', data },
        { now, metadata: caller },
      );
    } catch (error) {
      new Logger('PartnerCredentials').warn(
        `key ${data.keyId} of partner ${data.partnerId} works once the views show it: its claim was not recorded (${String(error)})`,
      );
    }
  }
}

export interface CreatedPartner extends IssuedCredentials {
  partnerId: string;
  name: string;
  role: PartnerRole;
  keyId: string;
  prefix: string;
  requestsPerMinute: number | null;
  position: LogPosition | null;
  /** The sandbox's test credentials (a partner's; an auditor has none). */
  sandbox: OpenedSandbox | null;
  /** Why a partner's sandbox did not open (`OpenSandbox` opens it later); null when it did, or for an auditor. */
  sandboxFailure: string | null;
}

/** A sandbox's account and its first test credentials, in clear only here. */
export interface OpenedSandbox extends IssuedCredentials {
  partnerId: string;
  keyId: string;
  prefix: string;
  position: LogPosition | null;
}

/** A sandbox's credentials as the operator's tools print them (JSON). */
export const sandboxCredentialsJson = (sandbox: OpenedSandbox) => ({
  partner_id: sandbox.partnerId,
  api_key: sandbox.apiKey,
  username: sandbox.username,
  password: sandbox.password,
});

/** The registration of an account with fresh credentials: the event's data and the secrets, apart. */
function registration(
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

/** Registers a partner; the only moment its secrets exist in clear is this command's result. */
export class CreatePartner extends Command<CreatedPartner> {
  constructor(
    readonly name: string,
    readonly role: PartnerRole,
    readonly caller: CommandCaller,
    /** The partner's request budget; undefined: the service's default. */
    readonly requestsPerMinute?: number,
  ) {
    super();
  }
}

@CommandHandler(CreatePartner)
export class CreatePartnerHandler extends PartnerCommandHandler implements ICommandHandler<CreatePartner> {
  async execute({ name, role, caller, requestsPerMinute }: CreatePartner): Promise<CreatedPartner> {
    const partnerId = this.ids.next();
    const { data, credentials, keyId } = registration(this.ids, partnerId, name, role, { requestsPerMinute });
    const position = await this.run({ type: 'RegisterPartner', data }, caller);
    // A second append, whose failure must not lose the live credentials, shown only in this answer:
    // `OpenSandbox` opens the sandbox later.
    let sandbox: OpenedSandbox | null = null;
    let sandboxFailure: string | null = null;
    if (role === 'partner')
      try {
        sandbox = await this.openSandbox(partnerId, data.name, caller);
      } catch (error) {
        sandboxFailure = error instanceof Error ? error.message : String(error);
      }
    return {
      partnerId,
      name: data.name,
      role,
      keyId,
      prefix: data.apiKeyPrefix,
      position,
      requestsPerMinute: requestsPerMinute ?? null,
      sandbox,
      sandboxFailure,
      ...credentials,
    };
  }
}

/**
 * Opens a live partner's sandbox where it has none (its registration made none, or its opening
 * failed): its account and first test credentials. Refused for an auditor, a sandbox, or a partner
 * whose sandbox is open (its credentials are rotated instead).
 */
export class OpenSandbox extends Command<OpenedSandbox> {
  constructor(
    readonly livePartnerId: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(OpenSandbox)
export class OpenSandboxHandler extends PartnerCommandHandler implements ICommandHandler<OpenSandbox> {
  async execute({ livePartnerId, caller }: OpenSandbox): Promise<OpenedSandbox> {
    const { state: live } = await loadAggregate(this.store, partnerStream(livePartnerId), partnerDecider);
    if (!live.registered || isSandbox(livePartnerId)) throw new NotFound('partner not found');
    if (live.role !== 'partner')
      throw new ValidationFailed([{ type: 'invalid', resource: 'partner', field: 'role', message: 'an auditor has no sandbox' }]);
    const { state: sandbox } = await loadAggregate(this.store, partnerStream(sandboxOf(livePartnerId)), partnerDecider);
    if (sandbox.registered)
      throw new ValidationFailed([
        { type: 'invalid', resource: 'partner', field: 'sandbox', message: 'is open already: rotate its test key or password instead' },
      ]);
    return this.openSandbox(livePartnerId, live.name!, caller);
  }
}

/** Sets a partner's request budget (null: the service's default); applies within seconds, in every process. */
export class ChangePartnerRateLimit extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly requestsPerMinute: number | null,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(ChangePartnerRateLimit)
export class ChangePartnerRateLimitHandler extends PartnerCommandHandler implements ICommandHandler<ChangePartnerRateLimit> {
  async execute({ partnerId, requestsPerMinute, caller }: ChangePartnerRateLimit) {
    return { position: await this.run({ type: 'ChangePartnerRateLimit', data: { partnerId, requestsPerMinute } }, caller) };
  }
}

/** Sets how long after a redemption the partner's coupons may be rolled back, in hours (null: the default). */
export class ChangePartnerRollbackWindow extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly hours: number | null,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(ChangePartnerRollbackWindow)
export class ChangePartnerRollbackWindowHandler extends PartnerCommandHandler implements ICommandHandler<ChangePartnerRollbackWindow> {
  async execute({ partnerId, hours, caller }: ChangePartnerRollbackWindow) {
    return { position: await this.run({ type: 'ChangePartnerRollbackWindow', data: { partnerId, hours } }, caller) };
  }
}

/** A key made by {@link IssuePartnerApiKey} or {@link RotatePartnerApiKey}: its secret exists in clear only here. */
export interface IssuedApiKey {
  keyId: string;
  apiKey: string;
  prefix: string;
  position: LogPosition | null;
}

/** One more key for the partner, beside those it holds. */
export class IssuePartnerApiKey extends Command<IssuedApiKey> {
  constructor(
    readonly partnerId: string,
    /** undefined: `key <n>`. */
    readonly name: string | undefined,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

/** A new key: a test one (`dk_test_`) for a sandbox. */
function madeKey(ids: IdGenerator, partnerId: string) {
  const apiKey = newApiKey(undefined, isSandbox(partnerId));
  return { keyId: ids.next(), apiKey, prefix: keyPrefix(apiKey), keyHash: hashSecret(apiKey) };
}

@CommandHandler(IssuePartnerApiKey)
export class IssuePartnerApiKeyHandler extends PartnerCommandHandler implements ICommandHandler<IssuePartnerApiKey> {
  async execute({ partnerId, name, caller }: IssuePartnerApiKey): Promise<IssuedApiKey> {
    const { keyHash, ...key } = madeKey(this.ids, partnerId);
    const position = await this.run(
      { type: 'IssuePartnerApiKey', data: { partnerId, keyId: key.keyId, keyHash, prefix: key.prefix, name } },
      caller,
    );
    return { ...key, position };
  }
}

export interface RotatedApiKey extends IssuedApiKey {
  /** The key replaced and when it stops working; null when the partner held no live key to replace. */
  oldKeyId: string | null;
  oldExpiresAt: string | null;
}

/**
 * A new key in place of one the partner holds (`keyId`, or its one live key when null), which keeps
 * working until `oldExpiresAt` (at once when that is now or past: a compromised key).
 */
export class RotatePartnerApiKey extends Command<RotatedApiKey> {
  constructor(
    readonly partnerId: string,
    readonly keyId: string | null,
    readonly oldExpiresAt: string,
    readonly caller: CommandCaller,
    /** undefined: the old key's name. */
    readonly name?: string,
  ) {
    super();
  }
}

@CommandHandler(RotatePartnerApiKey)
export class RotatePartnerApiKeyHandler extends PartnerCommandHandler implements ICommandHandler<RotatePartnerApiKey> {
  async execute({ partnerId, keyId, oldExpiresAt, caller, name }: RotatePartnerApiKey): Promise<RotatedApiKey> {
    const { keyHash, ...key } = madeKey(this.ids, partnerId);
    const now = this.clock.now();
    const { position, events } = await handleCommand(
      this.store,
      partnerStream(partnerId),
      partnerDecider,
      {
        type: 'RotatePartnerApiKey',
        data: { partnerId, keyId: key.keyId, keyHash, prefix: key.prefix, name, oldKeyId: keyId, oldExpiresAt },
      },
      { now, metadata: caller },
    );
    await this.claimKey({ keyHash, partnerId, keyId: key.keyId }, caller, now);
    const expiry = events.find((event) => event.type === 'PartnerApiKeyExpirySet');
    return {
      ...key,
      position,
      oldKeyId: expiry?.type === 'PartnerApiKeyExpirySet' ? expiry.data.keyId : null,
      oldExpiresAt: expiry?.type === 'PartnerApiKeyExpirySet' ? expiry.data.expiresAt : null,
    };
  }
}

/** Ends a key at once. */
export class RevokePartnerApiKey extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly keyId: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(RevokePartnerApiKey)
export class RevokePartnerApiKeyHandler extends PartnerCommandHandler implements ICommandHandler<RevokePartnerApiKey> {
  async execute({ partnerId, keyId, caller }: RevokePartnerApiKey) {
    return { position: await this.run({ type: 'RevokePartnerApiKey', data: { partnerId, keyId } }, caller) };
  }
}

export class RenamePartnerApiKey extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly keyId: string,
    readonly name: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(RenamePartnerApiKey)
export class RenamePartnerApiKeyHandler extends PartnerCommandHandler implements ICommandHandler<RenamePartnerApiKey> {
  async execute({ partnerId, keyId, name, caller }: RenamePartnerApiKey) {
    return { position: await this.run({ type: 'RenamePartnerApiKey', data: { partnerId, keyId, name } }, caller) };
  }
}

export interface RotatedPassword {
  username: string;
  password: string;
  previousExpiresAt: string;
  position: LogPosition | null;
}

/** A new v3 password; the current one keeps working until `oldExpiresAt` (at once when that is now or past). */
export class RotatePartnerPassword extends Command<RotatedPassword> {
  constructor(
    readonly partnerId: string,
    readonly oldExpiresAt: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(RotatePartnerPassword)
export class RotatePartnerPasswordHandler extends PartnerCommandHandler implements ICommandHandler<RotatePartnerPassword> {
  async execute({ partnerId, oldExpiresAt, caller }: RotatePartnerPassword): Promise<RotatedPassword> {
    const password = newPassword();
    const passwordHash = hashSecret(password);
    const now = this.clock.now();
    const { position, events, state } = await handleCommand(
      this.store,
      partnerStream(partnerId),
      partnerDecider,
      { type: 'RotatePartnerPassword', data: { partnerId, passwordHash, previousExpiresAt: oldExpiresAt } },
      { now, metadata: caller },
    );
    await this.claimPassword(passwordHash, partnerId, caller, now);
    const rotated = events[0];
    return {
      username: state.username!,
      password,
      previousExpiresAt: rotated.type === 'PartnerPasswordRotated' ? rotated.data.previousExpiresAt : oldExpiresAt,
      position,
    };
  }
}
