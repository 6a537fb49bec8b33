import { Clock, CommandCaller, EventStore, handleCommand, IdGenerator, LogPosition } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { hashSecret, IssuedCredentials, issueCredentials } from '../domain/partner/partner-credentials';
import { partnerDecider } from '../domain/partner/partner.decider';
import { PartnerRole, partnerStream } from '../domain/partner/partner.events';

export interface CreatedPartner extends IssuedCredentials {
  partnerId: string;
  name: string;
  role: PartnerRole;
  position: LogPosition | null;
}

/** Registers a partner; the only moment its secrets exist in clear is this command's result. */
export class CreatePartner extends Command<CreatedPartner> {
  constructor(
    readonly name: string,
    readonly role: PartnerRole,
    readonly caller: CommandCaller,
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

  async execute({ name, role, caller }: CreatePartner): Promise<CreatedPartner> {
    const partnerId = this.ids.next();
    const credentials = issueCredentials(name);
    const data = {
      partnerId,
      name: name.trim(),
      role,
      apiKeyHash: hashSecret(credentials.apiKey),
      username: credentials.username,
      passwordHash: hashSecret(credentials.password),
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
    return { partnerId, name: data.name, role, position, ...credentials };
  }
}
