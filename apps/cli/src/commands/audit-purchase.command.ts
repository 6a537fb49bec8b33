import { PurchaseAudit } from '@deals/purchasing';
import { Command } from 'nest-commander';
import { HistoryCommand, HistoryOptions } from './history-options';

@Command({
  name: 'audit:purchase',
  arguments: '<purchase_id>',
  description: "print every event of a purchase in order, with who caused it and the purchase's state after it",
})
export class AuditPurchaseCommand extends HistoryCommand {
  constructor(private readonly audit: PurchaseAudit) {
    super();
  }

  async run([purchaseId]: string[], options: HistoryOptions): Promise<void> {
    const entries = await this.audit.history(purchaseId, options.asOf ?? null);
    if (options.json) return void process.stdout.write(`${JSON.stringify(entries)}\n`);
    process.stdout.write(`purchase ${purchaseId}${options.asOf ? ` as of ${options.asOf.toISOString()}` : ''}: ${entries.length} events\n`);
    for (const e of entries) {
      process.stdout.write(
        `${e.position}  ${e.occurredAt}  ${e.type.padEnd(20)} ${(e.actor ?? '-').padEnd(24)} request ${e.requestId ?? '-'}  correlation ${e.correlationId ?? '-'}  -> ${e.purchaseState}\n`,
      );
    }
  }
}
