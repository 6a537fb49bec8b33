import { CreatePartner, PARTNER_ROLES, PartnerRole } from '@deals/accounts';
import { OPERATOR } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { Command, CommandRunner, Option } from 'nest-commander';

interface Options {
  name: string;
  role: PartnerRole;
  json?: boolean;
}

@Command({ name: 'partners:create', description: 'register a partner and print its credentials, once' })
export class PartnersCreateCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run(_: string[], options: Options): Promise<void> {
    if (!options.name?.trim()) throw new Error('--name is required');
    const partner = await this.commands.execute(new CreatePartner(options.name, options.role, OPERATOR));
    const out = {
      partner_id: partner.partnerId,
      name: partner.name,
      role: partner.role,
      api_key: partner.apiKey,
      username: partner.username,
      password: partner.password,
    };
    if (options.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else
      process.stdout.write(
        `Partner ${out.name} (${out.role}) registered as ${out.partner_id}.\nThese credentials are shown only now; the service keeps only their hashes.\n` +
          `  api_key  ${out.api_key}\n  username ${out.username}\n  password ${out.password}\n`,
      );
  }

  @Option({ flags: '-n, --name <name>', description: 'the partner name', required: true })
  parseName(value: string) {
    return value;
  }

  @Option({ flags: '-r, --role <role>', description: `one of ${PARTNER_ROLES.join(', ')}`, defaultValue: 'partner' })
  parseRole(value: string): PartnerRole {
    if (!PARTNER_ROLES.includes(value as PartnerRole)) throw new Error(`--role must be one of ${PARTNER_ROLES.join(', ')}`);
    return value as PartnerRole;
  }

  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}
