import { netOf, SettlementQueries, signedFigures, statementCsv } from '@deals/settlement';
import { Command, CommandRunner, Option } from 'nest-commander';

const money = (cents: number) =>
  `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;

@Command({
  name: 'settlements:show',
  arguments: '<partner_id> <date>',
  description: "print a partner's statement of a UTC day (YYYY-MM-DD): its figures, state and digest, and its line items",
})
export class SettlementsShowCommand extends CommandRunner {
  constructor(private readonly settlements: SettlementQueries) {
    super();
  }

  async run([partnerId, day]: string[], options: { json?: boolean; csv?: boolean }): Promise<void> {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)))
      throw new Error(`${day} is not a UTC day: give YYYY-MM-DD`);
    const { statement, lineItems } = await this.settlements.statement(partnerId, day);
    if (options.csv) return void process.stdout.write(statementCsv(lineItems));
    if (options.json) return void process.stdout.write(`${JSON.stringify({ statement, lineItems })}\n`);
    const rows = signedFigures(statement.totals);
    process.stdout.write(
      `partner ${partnerId}, ${day} (UTC): ${statement.state}${statement.state === 'open' ? `, closes ${statement.closesAt}` : `, digest ${statement.digest}`}\n`,
    );
    for (const [name, cents] of rows) process.stdout.write(`  ${name.toLowerCase().padEnd(20)} ${money(cents).padStart(14)}\n`);
    process.stdout.write(`${lineItems.length} line items:\n`);
    for (const l of lineItems) {
      const moved = netOf(l);
      process.stdout.write(
        `  ${l.at}  ${l.kind.padEnd(26)} ${l.reference.padEnd(32)} ${(l.channel ?? '').padEnd(11)} ${money(moved).padStart(12)}\n`,
      );
    }
  }

  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }

  @Option({ flags: '--csv', description: 'print the line items CSV (the digest is its SHA-256)' })
  parseCsv() {
    return true;
  }
}
