import 'reflect-metadata';
import { DomainError } from '@deals/kernel';
import { loadServiceConfig } from '@deals/runtime';
import { CommandFactory } from 'nest-commander';
import { CliModule } from './cli.module';

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

async function main() {
  const config = loadServiceConfig();
  await CommandFactory.run(CliModule.forRoot(config), {
    logger: ['error', 'warn'],
    serviceErrorHandler: fail,
  });
  // Everything is closed by now; leave even if a driver kept a handle open (nest-commander#1042).
  process.exit(process.exitCode ?? 0);
}

main().catch(fail);
