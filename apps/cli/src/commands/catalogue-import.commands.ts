import { TransitionDeal, WORKFLOW_STATES, WorkflowState } from '@deals/catalog';
import { OPERATOR } from '@deals/kernel';
import { CatalogueImport, ImportReport } from '@deals/runtime';
import { CommandBus } from '@nestjs/cqrs';
import { Presets, SingleBar } from 'cli-progress';
import { readFileSync } from 'node:fs';
import { Command, CommandRunner } from 'nest-commander';

function readArray(file: string | undefined): unknown[] {
  if (!file) throw new Error('give the path of a JSON file holding an array');
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(parsed)) throw new Error(`${file} must hold a JSON array`);
  return parsed;
}

function report(kind: string, { outcomes }: ImportReport): void {
  const failed = outcomes.filter((o) => !o.ok);
  process.stdout.write(`${outcomes.length - failed.length} of ${outcomes.length} ${kind} imported.\n`);
  for (const f of failed) {
    process.stdout.write(`  ${f.id}: ${f.message}\n`);
  }
  if (failed.length) process.exitCode = 1;
}

async function withBar<T>(total: number, work: (tick: () => void) => Promise<T>): Promise<T> {
  const bar = new SingleBar({ format: '  {bar} {value}/{total} {duration}s', noTTYOutput: false }, Presets.shades_classic);
  bar.start(total, 0);
  try {
    return await work(() => bar.increment());
  } finally {
    bar.stop();
  }
}

@Command({ name: 'regions:import', arguments: '<file>', description: 'load regions from a JSON array (an existing id is updated)' })
export class RegionsImportCommand extends CommandRunner {
  constructor(private readonly catalogue: CatalogueImport) {
    super();
  }
  async run([file]: string[]): Promise<void> {
    const records = readArray(file);
    report('regions', await withBar(records.length, (tick) => this.catalogue.regions(records as never, OPERATOR, tick)));
  }
}

@Command({ name: 'deals:import', arguments: '<file>', description: 'load deals (v1 deal fields plus quantity) from a JSON array' })
export class DealsImportCommand extends CommandRunner {
  constructor(private readonly catalogue: CatalogueImport) {
    super();
  }
  async run([file]: string[]): Promise<void> {
    const records = readArray(file);
    report('deals', await withBar(records.length, (tick) => this.catalogue.deals(records as never, OPERATOR, tick)));
  }
}

@Command({
  name: 'deals:transition',
  arguments: '<id> <state>',
  description: `move a deal through its workflow (${WORKFLOW_STATES.join(', ')})`,
})
export class DealsTransitionCommand extends CommandRunner {
  constructor(private readonly commands: CommandBus) {
    super();
  }
  async run([id, state]: string[]): Promise<void> {
    const { moved } = await this.commands.execute(new TransitionDeal(id, state as WorkflowState, OPERATOR));
    process.stdout.write(moved ? `deal ${id} moved to ${state}\n` : `deal ${id} is already ${state}\n`);
  }
}
