import { EventStore, rebuildProjections, ViewStore } from '@deals/kernel';
import { formatProjectionStatus, ProjectionHost, projectionStatus } from '@deals/runtime';
import { Presets, SingleBar } from 'cli-progress';
import { Command, CommandRunner, Help, Option } from 'nest-commander';

/** How often the progress bar prints a line when its stream (stderr) is not a terminal: a log or a pipe. */
const PROGRESS_LINE_EVERY_MS = 5_000;

@Command({ name: 'projections:status', description: "show each projection's generation, checkpoint, documents and lag" })
export class ProjectionsStatusCommand extends CommandRunner {
  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
  ) {
    super();
  }

  async run(_: string[], options: { json?: boolean }): Promise<void> {
    process.stdout.write(formatProjectionStatus(await projectionStatus(this.store, this.views), options.json === true));
  }

  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }
}

@Command({
  name: 'projections:rebuild',
  arguments: '[name]',
  argsDescription: { name: 'the view to rebuild (the names are listed below); all of them when left out' },
  description:
    'replay the whole log into fresh views (all, or the one named) and switch to them; the API serves the old ones until the switch',
})
export class ProjectionsRebuildCommand extends CommandRunner {
  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly host: ProjectionHost,
  ) {
    super();
  }

  async run([name]: string[]): Promise<void> {
    const chosen = name ? this.host.projections.filter((p) => p.name === name) : this.host.projections;
    if (chosen.length === 0) throw new Error(`no projection named ${name}; known: ${this.host.projections.map((p) => p.name).join(', ')}`);
    const total = await this.count();
    const started = Date.now();
    // On a terminal the bar redraws in place; anywhere else (noTTYOutput) it prints a line every
    // PROGRESS_LINE_EVERY_MS, so a rebuild run from a script or a container still shows progress.
    const bar = new SingleBar(
      {
        format: '  {bar} {percentage}% {value}/{total} events  {rate} events/s  {duration}s',
        noTTYOutput: true,
        notTTYSchedule: PROGRESS_LINE_EVERY_MS,
      },
      Presets.shades_classic,
    );
    bar.start(total, 0, { rate: 0 });
    const progress = await rebuildProjections(this.store, this.views, chosen, (p) => {
      bar.update(Math.min(p.applied, total), { rate: Math.round(p.applied / Math.max(0.001, (Date.now() - started) / 1000)) });
    });
    bar.stop();
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `rebuilt ${chosen.map((p) => p.name).join(', ')} from ${progress.applied} events in ${seconds.toFixed(1)} s ` +
        `(${Math.round(progress.applied / Math.max(seconds, 0.001))} events/s) and switched to them.\n`,
    );
  }

  /** The names `[name]` accepts: the projections this process registers. */
  @Help('after')
  viewNames(): string {
    return `\nViews:\n${this.host.projections.map((p) => `  ${p.name}`).join('\n')}`;
  }

  private count(): Promise<number> {
    return this.store.countAfter(null);
  }
}
