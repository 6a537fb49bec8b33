import { Clock, CommandCaller, EventStore, handleCommand, IdGenerator, LogPosition } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { hashSecret, IssuedCredentials, issueCredentials } from '../domain/partner/partner-credentials';
import { partnerDecider } from '../domain/partner/partner.decider';
import { PartnerRole, partnerStream } from '../domain/partner/partner.events';

export interface CreatedPartner extends IssuedCredentials {
  partnerId: string;
  name: string;
  role: PartnerRole;
  requestsPerMinute: number | null;
  position: LogPosition | null;
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
export class CreatePartnerHandler implements ICommandHandler<CreatePartner> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async execute({ name, role, caller, requestsPerMinute }: CreatePartner): Promise<CreatedPartner> {
    const partnerId = this.ids.next();
    const credentials = issueCredentials(name);
    const data = {
      partnerId,
      name: name.trim(),
      role,
      apiKeyHash: hashSecret(credentials.apiKey),
      username: credentials.username,
      passwordHash: hashSecret(credentials.password),
      ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}),
    };
    const { position } = await handleCommand(
      this.store,
      partnerStream(partnerId),
      partnerDecider,
      { type: 'RegisterPartner', data },
      {
        now: this.clock.now(),
        metadata: caller,
      },
    );
    return { partnerId, name: data.name, role, position, requestsPerMinute: requestsPerMinute ?? null, ...credentials };
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
export class ChangePartnerRateLimitHandler implements ICommandHandler<ChangePartnerRateLimit> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ partnerId, requestsPerMinute, caller }: ChangePartnerRateLimit): Promise<{ position: LogPosition | null }> {
    const { position } = await handleCommand(
      this.store,
      partnerStream(partnerId),
      partnerDecider,
      { type: 'ChangePartnerRateLimit', data: { partnerId, requestsPerMinute } },
      { now: this.clock.now(), metadata: caller },
    );
    return { position };
  }
}
