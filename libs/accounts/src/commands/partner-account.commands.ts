import { CommandCaller, isSandbox, loadAggregate, LogPosition, NotFound, sandboxOf, ValidationFailed } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { IssuedCredentials } from '../domain/partner/partner-credentials';
import { partnerDecider } from '../domain/partner/partner.decider';
import { PartnerRole, partnerStream } from '../domain/partner/partner.events';
import { OpenedSandbox, PartnerCommandHandler, registration } from './partner-command-handler';

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

/** A sandbox's credentials as the operator's tools print them (JSON). */
export const sandboxCredentialsJson = (sandbox: OpenedSandbox) => ({
  partner_id: sandbox.partnerId,
  api_key: sandbox.apiKey,
  username: sandbox.username,
  password: sandbox.password,
});

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
    if (live.status !== 'registered' || isSandbox(livePartnerId)) throw new NotFound('partner not found');
    if (live.role !== 'partner')
      throw new ValidationFailed([{ type: 'invalid', resource: 'partner', field: 'role', message: 'an auditor has no sandbox' }]);
    const { state: sandbox } = await loadAggregate(this.store, partnerStream(sandboxOf(livePartnerId)), partnerDecider);
    if (sandbox.status === 'registered')
      throw new ValidationFailed([
        { type: 'invalid', resource: 'partner', field: 'sandbox', message: 'is open already: rotate its test key or password instead' },
      ]);
    return this.openSandbox(livePartnerId, live.name, caller);
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
