import { EraseUser } from '@deals/accounts';
import { OPERATOR } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { Command, CommandRunner, Option } from 'nest-commander';
import { toldIfRefused } from './refusal';

@Command({
  name: 'users:erase',
  arguments: '<user_id>',
  description:
    "erase a user's personal data for good (any partner's user): its key is deleted, so its email, names, birthday, postal code, partner_data and shipping addresses are unreadable everywhere; the user is deleted, its purchases and amounts kept; its partner is told by a user.erased event",
})
export class UsersEraseCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run([userId]: string[], options: { json?: boolean }): Promise<void> {
    await toldIfRefused(async () => {
      const { erasedAt } = await this.commands.execute(new EraseUser(userId, { ...OPERATOR, actor: 'operator:users:erase' }));
      const out = { user_id: userId, erased_at: erasedAt };
      process.stdout.write(options.json ? `${JSON.stringify(out)}\n` : `user ${userId}: personal data erased at ${erasedAt}\n`);
    });
  }

  @Option({ flags: '--json', description: 'print the outcome as one line of JSON' })
  parseJson(): boolean {
    return true;
  }
}
