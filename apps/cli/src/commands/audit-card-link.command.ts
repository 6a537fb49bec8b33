import { CardLinkAudit } from '@deals/engagement';
import { Command, CommandRunner, Option } from 'nest-commander';

@Command({
  name: 'audit:card-link',
  arguments: '<card_link_id>',
  description: "print every event of a card link in order, with who caused it, the link's state after it and what its transactions earned",
})
export class AuditCardLinkCommand extends CommandRunner {
  constructor(private readonly audit: CardLinkAudit) {
    super();
  }

  async run([cardLinkId]: string[], options: { json?: boolean }): Promise<void> {
    const entries = await this.audit.history(cardLinkId);
    if (options.json) return void process.stdout.write(`${JSON.stringify(entries)}\n`);
    const last = entries[entries.length - 1];
    process.stdout.write(
      `card link ${cardLinkId}: ${entries.length} events; incentives ${last?.incentiveCents ?? 0} cents, fees ${last?.feeCents ?? 0} cents\n`,
    );
    for (const e of entries) {
      const data = e.data as { transactionReference?: string; transactionAmount?: number; incentiveCents?: number; feeCents?: number };
      const transaction =
        e.type === 'CardLinkRedeemed'
          ? `  ${data.transactionReference}: ${data.transactionAmount} cents, earned ${data.incentiveCents}, fee ${data.feeCents}`
          : '';
      process.stdout.write(
        `${e.position}  ${e.occurredAt}  ${e.type.padEnd(22)} ${(e.actor ?? '-').padEnd(24)} request ${e.requestId ?? '-'}  -> ${e.linkState}${transaction}\n`,
      );
    }
  }

  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }
}
