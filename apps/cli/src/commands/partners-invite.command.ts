import { OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { ServiceConfig } from '@deals/runtime';
import { CommandBus } from '@nestjs/cqrs';
import { Command, CommandRunner, Option } from 'nest-commander';

@Command({
  name: 'partners:invite',
  arguments: '<partner_id> <email>',
  argsDescription: { partner_id: 'the id partners:create printed', email: "the person's email address" },
  description: "invite a person to the partner's site: prints a one-time sign-up link, valid 72 hours",
})
export class PartnersInviteCommand extends CommandRunner {
  constructor(
    private readonly commands: CommandBus,
    private readonly config: ServiceConfig,
  ) {
    super();
  }

  async run([partnerId, email]: string[], options: { json?: boolean }): Promise<void> {
    const invited = await this.commands.execute(new InviteMember(partnerId, email, OPERATOR));
    const link = `${this.config.publicBaseUrl}/partner/sign-up?token=${invited.token}`;
    const out = {
      partner_id: partnerId,
      member_id: invited.memberId,
      email: invited.email,
      sign_up_url: link,
      expires_at: invited.expiresAt,
    };
    if (options.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else
      process.stdout.write(
        `Invited ${out.email} to partner ${partnerId}'s site. Send them this link; it works once, until ${out.expires_at}:\n  ${link}\n` +
          'The service keeps only its hash: inviting the same email again makes a new link and ends this one.\n',
      );
  }

  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}
