import 'reflect-metadata';
import { DomainError } from '@deals/kernel';
import { loadServiceConfig, ServiceConfig } from '@deals/runtime/service-config';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

function fail(error: unknown): never {
  const detail =
    error instanceof DomainError && error.issues.length
      ? `\n${error.issues.map((i) => `  ${i.field ?? i.resource}: ${i.message}`).join('\n')}`
      : '';
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}${detail}\n`);
  process.exit(1);
}

// A reader that stops early (`audit:purchase … | head`) closes the pipe: the end of the output, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  fail(error);
});

/**
 * `projections:status` (with `--json` or nothing else) on the embedded mode, answered from the data
 * folder's files without loading the service's modules: most of the CLI's start, which an
 * operator checking a rebuild pays at every call. Any other command, or a server, starts the CLI.
 */
async function quickStatus(config: ServiceConfig, args: string[]): Promise<boolean> {
  const [command, ...options] = args;
  const embedded = config.eventStoreUrl === null && config.databaseUrl === null && config.mongoUrl === null;
  if (command !== 'projections:status' || !embedded || options.some((o) => o !== '--json')) return false;
  const { embeddedProjectionStatus } = await import('@deals/runtime/embedded-status');
  process.stdout.write(await embeddedProjectionStatus(config, options.length > 0));
  return true;
}

/** Marks the program's name in the help texts written for `bin/deals.js`, which puts its own there. */
const PROGRAM_NAME_MARK = '\u0000program\u0000';

/**
 * Writes every help text beside the build (`dist/apps/cli/help.json`, or `DEALS_CLI_HELP_FILE`,
 * tagged with the build's `builtAt`), so that `bin/deals.js` answers `--help` without starting the service's modules. Run by
 * `npm run build` (scripts/build.js) after a build that changed something.
 */
async function writeHelpTexts(config: ServiceConfig, builtAt: number, file: string): Promise<void> {
  const { CommandFactory } = await import('nest-commander');
  const { CliModule, HelpTexts } = await import('./cli.module');
  const app = await CommandFactory.createWithoutRunning(CliModule.forRoot(config), { logger: false });
  const texts = app.get(HelpTexts).all(PROGRAM_NAME_MARK);
  await app.close();
  writeFileSync(file, `${JSON.stringify({ builtAt, mark: PROGRAM_NAME_MARK, ...texts })}\n`);
}

async function main() {
  const config = loadServiceConfig();
  const writeHelpFor = process.env.DEALS_CLI_WRITE_HELP;
  if (writeHelpFor) {
    await writeHelpTexts(config, Number(writeHelpFor), process.env.DEALS_CLI_HELP_FILE ?? join(__dirname, '..', 'help.json'));
    process.exit(0);
  }
  if (await quickStatus(config, process.argv.slice(2))) process.exit(0);
  // Loaded only for the commands that need them (see quickStatus).
  const { CommandFactory } = await import('nest-commander');
  const { CliModule } = await import('./cli.module');
  await CommandFactory.run(CliModule.forRoot(config), {
    logger: ['error', 'warn'],
    serviceErrorHandler: fail,
  });
  // Everything is closed by now; leave even if a driver kept a handle open (nest-commander#1042).
  process.exit(process.exitCode ?? 0);
}

main().catch(fail);
