import { CommandCaller, handleCommand, IdGenerator, isSandbox, LogPosition, NotFound } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { hashSecret, keyPrefix, newApiKey, newPassword } from '../domain/partner/partner-credentials';
import { partnerDecider } from '../domain/partner/partner.decider';
import { partnerStream } from '../domain/partner/partner.events';
import { PartnerCommandHandler } from './partner-command-handler';

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
    // The decision refuses a partner not registered: the state is a registered one's.
    if (state.status !== 'registered') throw new NotFound('partner not found');
    await this.claimPassword(passwordHash, partnerId, caller, now);
    const rotated = events[0];
    return {
      username: state.username,
      password,
      previousExpiresAt: rotated.type === 'PartnerPasswordRotated' ? rotated.data.previousExpiresAt : oldExpiresAt,
      position,
    };
  }
}
