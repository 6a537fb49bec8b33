import { isoInstant } from '@deals/kernel';
import { PurchaseAudit } from '@deals/purchasing';
import { Command, CommandRunner, Option } from 'nest-commander';

interface Options {
  json?: boolean;
  asOf?: Date;
}

@Command({
  name: 'audit:purchase',
  arguments: '<purchase_id>',
  description: "print every event of a purchase in order, with who caused it and the purchase's state after it",
})
export class AuditPurchaseCommand extends CommandRunner {
  constructor(private readonly audit: PurchaseAudit) {
    super();
  }

  async run([purchaseId]: string[], options: Options): Promise<void> {
    const entries = await this.audit.history(purchaseId, options.asOf ?? null);
    if (options.json) return void process.stdout.write(`${JSON.stringify(entries)}\n`);
    process.stdout.write(`purchase ${purchaseId}${options.asOf ? ` as of ${options.asOf.toISOString()}` : ''}: ${entries.length} events\n`);
    for (const e of entries) {
      process.stdout.write(
        `${e.position}  ${e.occurredAt}  ${e.type.padEnd(20)} ${(e.actor ?? '-').padEnd(24)} request ${e.requestId ?? '-'}  correlation ${e.correlationId ?? '-'}  -> ${e.purchaseState}\n`,
      );
    }
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
