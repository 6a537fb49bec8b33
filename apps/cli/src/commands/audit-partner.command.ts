import { PartnerAudit } from '@deals/accounts';
import { isoInstant } from '@deals/kernel';
import { Command, CommandRunner, Option } from 'nest-commander';

interface Options {
  json?: boolean;
  asOf?: Date;
}

@Command({
  name: 'audit:partner',
  arguments: '<partner_id>',
  description:
    "print every event of a partner's credentials and account in order (keys, passwords, budgets, site sign-ins), with who caused it",
})
export class AuditPartnerCommand extends CommandRunner {
  constructor(private readonly audit: PartnerAudit) {
    super();
  }

  async run([partnerId]: string[], options: Options): Promise<void> {
    const entries = await this.audit.history(partnerId, options.asOf ?? null);
    if (options.json) return void process.stdout.write(`${JSON.stringify(entries)}\n`);
    process.stdout.write(`partner ${partnerId}${options.asOf ? ` as of ${options.asOf.toISOString()}` : ''}: ${entries.length} events\n`);
    for (const e of entries)
      process.stdout.write(
        `${e.position}  ${e.occurredAt}  ${e.type.padEnd(26)} ${(e.actor ?? '-').padEnd(24)} ${JSON.stringify(e.data)}\n`,
      );
  }

  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }

  @Option({ flags: '--as-of <instant>', description: 'show the history up to this ISO 8601 instant' })
  parseAsOf(value: string): Date {
    const at = isoInstant(value);
    if (!at) throw new Error('--as-of needs an ISO 8601 instant: a date and time with Z or an offset (2026-06-15T12:00:00Z)');
    return at;
  }
}
