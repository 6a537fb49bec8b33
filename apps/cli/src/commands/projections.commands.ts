import { countByType, eventsHandled, EventStore, planRebuild, Projection, RebuildPart, rebuildProjections, ViewStore } from '@deals/kernel';
import { formatProjectionStatus, ProjectionHost, projectionStatus } from '@deals/runtime';
import { Presets, SingleBar } from 'cli-progress';
import { Command, CommandRunner, Help, Option } from 'nest-commander';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** How often the progress bar prints a line when its stream (stderr) is not a terminal: a log or a pipe. */
const PROGRESS_LINE_EVERY_MS = 5_000;
/** How often a part run by `--workers` tells its progress to the process that started it. */
const PART_PROGRESS_EVERY_MS = 500;
/** More processes than this gain nothing on a log: most views are small. */
const MAX_WORKERS = 16;

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

interface RebuildOptions {
  workers?: number;
  plan?: boolean;
  json?: boolean;
  partOf?: boolean;
}

/** What a part run by `--workers` writes on its standard output: its progress, a line at a time. */
interface PartProgress {
  applied: number;
}

@Command({
  name: 'projections:rebuild',
  arguments: '[names...]',
  argsDescription: { names: 'the views to rebuild (the names are listed below); all of them when left out' },
  description: 'replay the log into fresh views (all, or those named) and switch to them; the API serves the old ones until the switch',
})
export class ProjectionsRebuildCommand extends CommandRunner {
  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly host: ProjectionHost,
  ) {
    super();
  }

  async run(names: string[], options: RebuildOptions): Promise<void> {
    const chosen = this.chosen(names);
    if (options.partOf) return this.runPart(chosen);
    const counts = await countByType(this.store);
    const workers = options.workers ?? 1;
    const sizes = workers > 1 ? new Map((await this.views.status()).map((s) => [s.collection, s.bytes ?? 0])) : undefined;
    const parts = planRebuild(chosen, counts, workers, sizes);
    if (options.plan) return this.printPlan(parts, options.json === true);
    const started = Date.now();
    const rate = (applied: number) => Math.round(applied / Math.max(0.001, (Date.now() - started) / 1000));
    // Each part reads the events its views handle: an event two parts handle is read by both.
    const total = parts.length > 1 ? parts.reduce((n, part) => n + part.events, 0) : eventsHandled(chosen, counts);
    const bar = progressBar(total);
    let setAside = 0;
    const applied =
      parts.length > 1
        ? await this.runParts(parts, (n) => bar.update(Math.min(n, total), { rate: rate(n) }))
        : (
            await rebuildProjections(this.store, this.views, chosen, (p) => {
              setAside = p.setAside;
              bar.update(Math.min(p.applied, total), { rate: rate(p.applied) });
            })
          ).applied;
    bar.stop();
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `rebuilt ${chosen.map((p) => p.name).join(', ')} from ${applied} events in ${seconds.toFixed(1)} s ` +
        `(${Math.round(applied / Math.max(seconds, 0.001))} events/s${parts.length > 1 ? `, ${parts.length} processes` : ''}) and switched to them.\n`,
    );
    if (setAside)
      process.stdout.write(`${setAside} events could not be applied and were set aside: projections:dead-letters lists them.\n`);
  }

  /** A part of a rebuild run by --workers: progress as JSON lines for the process that started it. */
  private async runPart(chosen: Projection[]): Promise<void> {
    let told = 0;
    const tell = (applied: number) => process.stdout.write(`${JSON.stringify({ applied } satisfies PartProgress)}\n`);
    const done = await rebuildProjections(this.store, this.views, chosen, ({ applied }) => {
      if (Date.now() - told < PART_PROGRESS_EVERY_MS) return;
      told = Date.now();
      tell(applied);
    });
    tell(done.applied);
  }

  private chosen(names: readonly string[]): Projection[] {
    return chosenProjections(this.host.projections, names);
  }

  private printPlan(parts: RebuildPart[], json: boolean): void {
    if (json)
      return void process.stdout.write(`${JSON.stringify({ parts: parts.map((p) => p.views), events: parts.map((p) => p.events) })}\n`);
    process.stdout.write(
      parts.map((part, i) => `process ${i + 1}, ${part.events} events to read:\n  projections:rebuild ${part.views.join(' ')}\n`).join(''),
    );
  }

  /**
   * Each part in a process of its own (this CLI again, with `--part-of`), all at once; the events
   * folded by all of them told to `onApplied`. Every part finishes (each switches to its views
   * when done) even when another fails; then any failure is thrown, naming its views.
   */
  private async runParts(parts: RebuildPart[], onApplied: (applied: number) => void): Promise<number> {
    const applied = parts.map(() => 0);
    const main = join(__dirname, '..', 'main.js');
    // Stopping this process (Ctrl-C, SIGTERM) stops the parts too, not left running unseen.
    const children: ChildProcess[] = [];
    const stop = (signal: NodeJS.Signals) => {
      for (const child of children) child.kill(signal);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
    const runs = parts.map(
      (part, i) =>
        new Promise<string | null>((resolve) => {
          // With this process's Node.js options (a heap size, say).
          const child = spawn(process.execPath, [...process.execArgv, main, 'projections:rebuild', ...part.views, '--part-of'], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          children.push(child);
          let stderr = '';
          child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
          createInterface({ input: child.stdout }).on('line', (line) => {
            try {
              applied[i] = (JSON.parse(line) as PartProgress).applied;
              onApplied(applied.reduce((a, b) => a + b, 0));
            } catch {
              // not a progress line
            }
          });
          child.once('error', (error) => resolve(`${part.views.join(', ')}: ${error.message}`));
          child.once('exit', (code, signal) =>
            resolve(code === 0 ? null : `${part.views.join(', ')}: ${signal ?? `exit ${code}`} ${stderr.trim().split('\n').pop() ?? ''}`),
          );
        }),
    );
    const failed = (await Promise.all(runs)).filter((failure): failure is string => failure !== null);
    process.off('SIGINT', stop).off('SIGTERM', stop);
    if (failed.length)
      throw new Error(`the rebuild of some views failed (they serve as before; the others switched): ${failed.join('; ')}`);
    return applied.reduce((a, b) => a + b, 0);
  }

  @Option({
    flags: '--workers <n>',
    description: `rebuild in n processes at once (1 to ${MAX_WORKERS}), each given views of about equal weight and reading only the events they handle`,
  })
  parseWorkers(value: string): number {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_WORKERS)
      throw new Error(`--workers takes a whole number from 1 to ${MAX_WORKERS}, not ${value}`);
    return n;
  }

  @Option({
    flags: '--plan',
    description: 'print how --workers would divide the views (one command a process, to run them on several machines) and rebuild nothing',
  })
  parsePlan() {
    return true;
  }

  @Option({ flags: '--json', description: 'with --plan, print the plan as JSON' })
  parseJson() {
    return true;
  }

  @Option({ flags: '--part-of', description: 'run as one part of --workers: progress as JSON lines on standard output, no bar' })
  parsePartOf() {
    return true;
  }

  /** The names `[names...]` accepts: the projections this process registers. */
  @Help('after')
  viewNames(): string {
    return `\nViews:\n${this.host.projections.map((p) => `  ${p.name}`).join('\n')}`;
  }
}

/** The projections named (all when none), or an error listing the names known (a name given that is none is not repeated). */
export function chosenProjections(known: readonly Projection[], names: readonly string[]): Projection[] {
  const unknown = names.filter((name) => !known.some((p) => p.name === name));
  if (unknown.length) throw new Error(`a view named is not one of: ${known.map((p) => p.name).join(', ')}`);
  return names.length ? known.filter((p) => names.includes(p.name)) : [...known];
}

/**
 * On a terminal the bar redraws in place; anywhere else (noTTYOutput) it prints a line every
 * PROGRESS_LINE_EVERY_MS, so a rebuild run from a script or a container still shows progress.
 */
function progressBar(total: number): SingleBar {
  const bar = new SingleBar(
    {
      format: '  {bar} {percentage}% {value}/{total} events  {rate} events/s  {duration}s',
      noTTYOutput: true,
      notTTYSchedule: PROGRESS_LINE_EVERY_MS,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0, { rate: 0 });
  return bar;
}
