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
      const data = e.data as {
        transactionReference?: string;
        transactionAmount?: number;
        incentiveCents?: number;
        feeCents?: number;
        incentiveReversedCents?: number;
        feeReversedCents?: number;
      };
      const transaction =
        e.type === 'CardLinkRedeemed' || e.type === 'CardTransactionCleared'
          ? `  ${data.transactionReference}: ${data.transactionAmount} cents, earned ${data.incentiveCents}, fee ${data.feeCents}`
          : e.type === 'CardTransactionRefunded'
            ? `  ${data.transactionReference}: ${data.transactionAmount} cents back, reversed ${data.incentiveReversedCents}, fee ${data.feeReversedCents}`
            : e.type === 'CardTransactionAuthorised'
              ? `  ${data.transactionReference}: ${data.transactionAmount} cents authorised`
              : '';
      process.stdout.write(
        `${e.position}  ${e.occurredAt}  ${e.type.padEnd(26)} ${(e.actor ?? '-').padEnd(24)} request ${e.requestId ?? '-'}  -> ${e.linkState}${transaction}\n`,
      );
    }
  }

  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }
}
