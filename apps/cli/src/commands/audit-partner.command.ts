import { PartnerAudit } from '@deals/accounts';
import { Command } from 'nest-commander';
import { HistoryCommand, HistoryOptions } from './history-options';

@Command({
  name: 'audit:partner',
  arguments: '<partner_id>',
  description:
    "print every event of a partner's credentials and account in order (keys, passwords, budgets, site sign-ins), with who caused it",
})
export class AuditPartnerCommand extends HistoryCommand {
  constructor(private readonly audit: PartnerAudit) {
    super();
  }

  async run([partnerId]: string[], options: HistoryOptions): Promise<void> {
    const entries = await this.audit.history(partnerId, options.asOf ?? null);
    if (options.json) return void process.stdout.write(`${JSON.stringify(entries)}\n`);
    process.stdout.write(`partner ${partnerId}${options.asOf ? ` as of ${options.asOf.toISOString()}` : ''}: ${entries.length} events\n`);
    for (const e of entries)
      process.stdout.write(
        `${e.position}  ${e.occurredAt}  ${e.type.padEnd(26)} ${(e.actor ?? '-').padEnd(24)} ${JSON.stringify(e.data)}\n`,
      );
  }
}
