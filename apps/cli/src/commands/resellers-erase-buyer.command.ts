import { OPERATOR } from '@deals/kernel';
import { EraseResaleBuyer } from '@deals/purchasing';
import { CommandBus } from '@nestjs/cqrs';
import { Command, CommandRunner, Option } from 'nest-commander';
import { toldIfRefused } from './refusal';

@Command({
  name: 'resellers:erase-buyer',
  arguments: '<purchase_id>',
  description:
    "erase the buyer of a reseller's sale for good (any partner's sale): its key is deleted, so the names, address and telephone the sale gave are unreadable everywhere; the purchase, its coupons and amounts are kept",
})
export class ResellersEraseBuyerCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run([purchaseId]: string[], options: { json?: boolean }): Promise<void> {
    await toldIfRefused(async () => {
      const { erasedAt } = await this.commands.execute(
        new EraseResaleBuyer(purchaseId, null, { ...OPERATOR, actor: 'operator:resellers:erase-buyer' }),
      );
      const out = { purchase_id: purchaseId, erased_at: erasedAt };
      process.stdout.write(options.json ? `${JSON.stringify(out)}\n` : `purchase ${purchaseId}: its buyer erased at ${erasedAt}\n`);
    });
  }

  @Option({ flags: '--json', description: 'print the outcome as one line of JSON' })
  parseJson(): boolean {
    return true;
  }
}
