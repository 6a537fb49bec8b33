import { OPERATOR, ViewStore } from '@deals/kernel';
import { InviteMember, PARTNER_MEMBERS, RemoveMember } from '@deals/partner-site';
import type { PartnerMember } from '@deals/partner-site';
import { linkBaseUrl, ServiceConfig } from '@deals/runtime';
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
    const base = linkBaseUrl(this.config);
    const link = `${base.url}/partner/sign-up?token=${invited.token}`;
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
          'The service keeps only its hash: inviting the same email again makes a new link and ends this one.\n' +
          (base.guessed
            ? `No API serves ${this.config.dataDir} now: the link assumes it will answer at ${base.url} (PUBLIC_BASE_URL sets it).\n`
            : ''),
      );
  }

  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}

@Command({
  name: 'partners:members',
  arguments: '<partner_id>',
  description: "list the people of a partner's site, as the views show them: email, state, second factor, last sign-in",
})
export class PartnersMembersCommand extends CommandRunner {
  constructor(private readonly views: ViewStore) {
    super();
  }

  async run([partnerId]: string[], options: { json?: boolean }): Promise<void> {
    const members = await this.views.find<PartnerMember>(PARTNER_MEMBERS, { partnerId }, { sort: { email: 1 } });
    const rows = members.map((m) => ({
      email: m.email,
      status: m.status,
      totp: m.totpEnrolled,
      invited_at: m.invitedAt,
      signed_up_at: m.signedUpAt,
      last_sign_in_at: m.lastSignInAt,
    }));
    if (options.json) return void process.stdout.write(`${JSON.stringify(rows)}\n`);
    for (const r of rows)
      process.stdout.write(`${r.status.padEnd(8)} ${r.totp ? 'TOTP' : '    '}  last sign-in ${r.last_sign_in_at ?? 'never'}  ${r.email}\n`);
    process.stdout.write(`${rows.length} people\n`);
  }

  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}

@Command({
  name: 'partners:remove-member',
  arguments: '<partner_id> <email>',
  description:
    "take a person's access to the partner's site away: their sessions end at once, on every replica; invite them again to restore it",
})
export class PartnersRemoveMemberCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }

  async run([partnerId, email]: string[], options: { json?: boolean }): Promise<void> {
    const removed = await this.commands.execute(new RemoveMember(partnerId, email, OPERATOR));
    const out = { partner_id: partnerId, member_id: removed.memberId, email, ended_sessions: removed.endedSessions };
    if (options.json) return void process.stdout.write(`${JSON.stringify(out)}\n`);
    process.stdout.write(`Removed ${email} from partner ${partnerId}'s site; ${out.ended_sessions} sessions ended.\n`);
  }

  @Option({ flags: '--json', description: 'print one machine-readable JSON line' })
  parseJson() {
    return true;
  }
}
