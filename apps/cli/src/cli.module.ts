import { ServiceCoreModule, ServiceConfig } from '@deals/runtime';
import { DynamicModule, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { InjectCommander } from 'nest-commander';
import { basename, relative } from 'node:path';
import { DealsImportCommand, DealsTransitionCommand, RegionsImportCommand } from './commands/catalogue-import.commands';
import { AuditPartnerCommand } from './commands/audit-partner.command';
import { PartnersCreateCommand, PartnersSandboxCommand, PartnersUpdateCommand } from './commands/partners-create.command';
import { PartnersInviteCommand, PartnersMembersCommand, PartnersRemoveMemberCommand } from './commands/partners-invite.command';
import {
  PartnersAddKeyCommand,
  PartnersKeysCommand,
  PartnersListCommand,
  PartnersRenameKeyCommand,
  PartnersRevokeKeyCommand,
  PartnersRotateKeyCommand,
  PartnersRotatePasswordCommand,
} from './commands/partners-credentials.command';
import { AuditPurchaseCommand } from './commands/audit-purchase.command';
import { AuditVerifyCommand } from './commands/audit-verify.command';
import { AuditCardLinkCommand } from './commands/audit-card-link.command';
import { SettlementsShowCommand } from './commands/settlements-show.command';
import { MailDigestCommand } from './commands/mail-digest.command';
import { RefundsForceCommand } from './commands/refunds-force.command';
import { UsersEraseCommand } from './commands/users-erase.command';
import { ResellersEraseBuyerCommand } from './commands/resellers-erase-buyer.command';
import { JobsListCommand, OperatorPasswordCommand } from './commands/operations.commands';
import { ProjectionsDeadLettersCommand } from './commands/dead-letters.command';
import { ProjectionsRebuildCommand, ProjectionsStatusCommand } from './commands/projections.commands';

/**
 * How the user started the CLI, for its usage lines (commander names the program after the
 * script's file otherwise: `main`): `npm run cli --`, `deals` (installed), or node and the script's path.
 */
export function programName(): string {
  if (process.env.npm_lifecycle_event === 'cli') return 'npm run cli --';
  const script = process.argv[1] ?? 'main.js';
  if (basename(script) === 'deals') return 'deals';
  return `node ${relative(process.cwd(), script) || script}`;
}

/** Gives the program its name before commander parses the arguments or prints help. */
@Injectable()
class ProgramName implements OnModuleInit {
  constructor(@InjectCommander() private readonly program: { name(name: string): unknown }) {}

  onModuleInit(): void {
    this.program.name(programName());
  }
}

/**
 * An unknown command that is a part of commands' names (`status`, `erase`) is answered with those
 * commands; any other, as commander answers it, with the names nearest in spelling.
 */
@Injectable()
export class UnknownCommandHints implements OnModuleInit {
  constructor(@InjectCommander() private readonly program: CommanderProgram) {}

  onModuleInit(): void {
    this.program.on('command:*', ([asked]) => {
      const meant = commandsNamedWith(
        asked,
        this.program.commands.map((command) => command.name()),
      );
      if (meant.length === 0) this.program.unknownCommand();
      this.program.error(`error: unknown command '${asked}'\n(Did you mean ${meant.join(', ')}?)`, {
        code: 'commander.unknownCommand',
        exitCode: 1,
      });
    });
  }
}

/** The names of which `word` is one part (`projections:status` for `status`), or the start of one. */
function commandsNamedWith(word: string, names: readonly string[]): string[] {
  const asked = word.toLowerCase();
  if (asked.length < 3) return [];
  return names.filter((name) => name.split(/[:-]/).some((part) => part === asked || part.startsWith(asked)));
}

/** What the CLI uses of commander's program (nest-commander's). */
interface CommanderProgram {
  name(name: string): unknown;
  helpInformation(): string;
  readonly commands: ReadonlyArray<{ name(): string; helpInformation(): string }>;
  on(event: 'command:*', listener: (operands: string[]) => void): unknown;
  error(message: string, options: { code: string; exitCode: number }): never;
  /** Commander's own answer to an unknown command: its nearest names by spelling (`projection:status`: `projections:status`). */
  unknownCommand(): never;
}

/** Every help text of the program, its own and each command's, with `name` as the program's name. */
@Injectable()
export class HelpTexts {
  constructor(@InjectCommander() private readonly program: CommanderProgram) {}

  all(name: string): { root: string; commands: Record<string, string> } {
    this.program.name(name);
    return {
      root: this.program.helpInformation(),
      commands: Object.fromEntries(this.program.commands.map((command) => [command.name(), command.helpInformation()])),
    };
  }
}

/**
 * The operator CLI: the shared core without HTTP, projection runners or job processing, so that it
 * exits as soon as its command is done.
 */
@Module({})
export class CliModule {
  static forRoot(config: ServiceConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [ServiceCoreModule.forRoot({ config, role: 'cli' })],
      providers: [
        ProgramName,
        UnknownCommandHints,
        HelpTexts,
        AuditPurchaseCommand,
        AuditVerifyCommand,
        AuditCardLinkCommand,
        SettlementsShowCommand,
        AuditPartnerCommand,
        MailDigestCommand,
        RefundsForceCommand,
        UsersEraseCommand,
        ResellersEraseBuyerCommand,
        JobsListCommand,
        OperatorPasswordCommand,
        PartnersCreateCommand,
        PartnersSandboxCommand,
        PartnersUpdateCommand,
        PartnersInviteCommand,
        PartnersMembersCommand,
        PartnersRemoveMemberCommand,
        PartnersListCommand,
        PartnersKeysCommand,
        PartnersAddKeyCommand,
        PartnersRotateKeyCommand,
        PartnersRevokeKeyCommand,
        PartnersRenameKeyCommand,
        PartnersRotatePasswordCommand,
        RegionsImportCommand,
        DealsImportCommand,
        DealsTransitionCommand,
        ProjectionsStatusCommand,
        ProjectionsRebuildCommand,
        ProjectionsDeadLettersCommand,
      ],
    };
  }
}
