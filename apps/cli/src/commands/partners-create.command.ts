import {
  ChangePartnerRateLimit,
  CreatePartner,
  OpenSandbox,
  sandboxCredentialsJson,
  MAX_REQUESTS_PER_MINUTE,
  PARTNER_ROLES,
  PartnerRole,
} from '@deals/accounts';
import { OPERATOR } from '@deals/kernel';
import { sandboxText } from './sandbox-credentials';
import { CommandBus } from '@nestjs/cqrs';
import { Command, CommandRunner, Option } from 'nest-commander';

interface Options {
  name: string;
  role: PartnerRole;
  rateLimit?: number;
  json?: boolean;
}

/** `--rate-limit`: requests a minute, a whole number from 1. */
function requestsPerMinute(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_REQUESTS_PER_MINUTE)
    throw new Error(`--rate-limit must be a whole number of requests a minute from 1 to ${MAX_REQUESTS_PER_MINUTE}, or default`);
  return n;
}

@Command({ name: 'partners:create', description: 'register a partner and print its credentials, once' })
export class PartnersCreateCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run(_: string[], options: Options): Promise<void> {
    if (!options.name?.trim()) throw new Error('--name is required');
    const partner = await this.commands.execute(new CreatePartner(options.name, options.role, OPERATOR, options.rateLimit));
    const out = {
      partner_id: partner.partnerId,
      name: partner.name,
      role: partner.role,
      api_key: partner.apiKey,
      username: partner.username,
      password: partner.password,
      requests_per_minute: partner.requestsPerMinute,
      test: partner.sandbox && sandboxCredentialsJson(partner.sandbox),
      ...(partner.sandboxFailure ? { sandbox_failure: partner.sandboxFailure } : {}),
    };
    if (options.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else
      process.stdout.write(
        `Partner ${out.name} (${out.role}) registered as ${out.partner_id}.\nThese credentials are shown only now; the service keeps only their hashes.\n` +
          `  api_key  ${out.api_key}\n  username ${out.username}\n  password ${out.password}\n` +
          `  budget   ${out.requests_per_minute === null ? "the service's default (RATE_LIMIT_PER_MINUTE)" : `${out.requests_per_minute} requests a minute`}\n` +
          (out.test ? sandboxText(out.test) : '') +
          (partner.sandboxFailure
            ? `Its sandbox did not open (${partner.sandboxFailure}): partners:sandbox ${out.partner_id} opens it.\n`
            : ''),
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

  @Option({ flags: '--rate-limit <requests>', description: "the partner's request budget, a minute (default: RATE_LIMIT_PER_MINUTE)" })
  parseRateLimit(value: string): number {
    return requestsPerMinute(value);
  }

  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}

@Command({
  name: 'partners:update',
  arguments: '<partner_id>',
  argsDescription: { partner_id: 'the id partners:create printed' },
  description: "change a partner's request budget; every API process applies it within 5 s",
})
export class PartnersUpdateCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run([partnerId]: string[], options: { rateLimit?: number | 'default' }): Promise<void> {
    if (options.rateLimit === undefined)
      throw new Error('nothing to change: give --rate-limit <requests a minute> or --rate-limit default');
    const budget = options.rateLimit === 'default' ? null : options.rateLimit;
    await this.commands.execute(new ChangePartnerRateLimit(partnerId, budget, OPERATOR));
    process.stdout.write(
      `Partner ${partnerId}: ${budget === null ? "the service's default budget" : `a budget of ${budget} requests a minute`}.\n`,
    );
  }

  @Option({
    flags: '--rate-limit <requests>',
    description: "the partner's request budget, a minute, or `default` for the service's (RATE_LIMIT_PER_MINUTE)",
  })
  parseRateLimit(value: string): number | 'default' {
    // (A parser's null would read as the option left out.)
    return value === 'default' ? value : requestsPerMinute(value);
  }
}

@Command({
  name: 'partners:sandbox',
  arguments: '<partner_id>',
  argsDescription: { partner_id: 'the live partner' },
  description: 'open the sandbox of a partner that has none and print its test credentials, once',
})
export class PartnersSandboxCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run([partnerId]: string[], options: { json?: boolean }): Promise<void> {
    const sandbox = sandboxCredentialsJson(await this.commands.execute(new OpenSandbox(partnerId, OPERATOR)));
    if (options.json) process.stdout.write(`${JSON.stringify(sandbox)}\n`);
    else process.stdout.write(`These credentials are shown only now; the service keeps only their hashes.\n${sandboxText(sandbox)}`);
  }

  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}
