import { countAfter, verifyHistory } from '@deals/kernel';
import { HistorySealing } from '@deals/runtime';
import { Presets, SingleBar } from 'cli-progress';
import { Command, CommandRunner, Option } from 'nest-commander';
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** How often the progress bar prints a line when its stream (stderr) is not a terminal. */
const PROGRESS_LINE_EVERY_MS = 5_000;

interface VerifyOptions {
  from?: string;
  to?: string;
  json?: boolean;
  publicKey?: string;
  strict?: boolean;
}

@Command({
  name: 'audit:verify',
  description:
    "check the event log against its seals and signed checkpoints: every event's hash and place in its stream's chain, each checkpoint's root, signature and line; names the first event that does not match (exit 1); counts the events no checkpoint covers yet, and fails on them (exit 1) with --strict, or when no process that seals is running",
})
export class AuditVerifyCommand extends CommandRunner {
  constructor(private readonly sealing: HistorySealing) {
    super();
  }

  async run(_: string[], options: VerifyOptions): Promise<void> {
    const { log, seals } = this.sealing;
    // A key the auditor kept apart, rather than the one the data folder's secret gives.
    const publicKey = options.publicKey ? createPublicKey(readFileSync(options.publicKey, 'utf8')) : this.sealing.publicKey;
    const total = options.from || options.to ? 0 : await countAfter(log, null);
    const bar = new SingleBar(
      { format: '  {bar} {value}/{total} events checked', noTTYOutput: true, notTTYSchedule: PROGRESS_LINE_EVERY_MS },
      Presets.shades_classic,
    );
    if (!options.json) bar.start(total, 0);
    const result = await verifyHistory(log, seals, publicKey, {
      from: options.from,
      to: options.to,
      onProgress: (events) => (events % 1000 === 0 ? bar.update(events) : undefined),
    });
    if (!options.json) {
      bar.update(result.events);
      bar.stop();
    }
    // Events after the last checkpoint are open to an unseen edit: a running service seals them at its
    // next round or as it stops; with none running, they were left so (a crash, a kill) and nothing vouches for them.
    const sealerRunning = await seals.sealerRunning();
    const unsealedFail = result.unsealed > 0 && (options.strict === true || !sealerRunning);
    const passed = result.verified && !unsealedFail;
    if (!passed) process.exitCode = 1;
    if (options.json) return void process.stdout.write(`${JSON.stringify({ ...result, sealerRunning, passed })}\n`);
    const { failure } = result;
    if (failure) {
      const what =
        failure.position === null
          ? `checkpoint ${failure.checkpoint}`
          : `the event at position ${failure.position} (${failure.streamId} revision ${failure.revision}, checkpoint ${failure.checkpoint})`;
      process.stdout.write(`NOT VERIFIED: ${what} ${failure.problem}.\n`);
      process.stdout.write(`${result.events} events in ${result.checkpoints} checkpoints matched before it.\n`);
      return;
    }
    process.stdout.write(`verified: ${result.events} events in ${result.checkpoints} signed checkpoints match their seals.\n`);
    if (result.unsealed === 0) return void process.stdout.write('every event is sealed.\n');
    const count = `${result.unsealed} ${result.unsealed === 1 ? 'event' : 'events'} not yet sealed`;
    if (!sealerRunning)
      process.stdout.write(
        `NOT SEALED: ${count}, after the last checkpoint, and no process that seals is running: a graceful stop seals what it wrote, ` +
          'so these were left by a crash or a kill, or written behind the service’s back, and nothing shows whether they were changed since. ' +
          'The next start of the service seals them as they are now.\n',
      );
    else if (options.strict)
      process.stdout.write(`NOT SEALED: ${count} (--strict); the running service seals them at its next checkpoint.\n`);
    else process.stdout.write(`${count}: the running service seals them at its next checkpoint.\n`);
  }

  @Option({ flags: '--from <position>', description: 'check the checkpoints holding events from this log position on' })
  parseFrom(value: string) {
    return value;
  }

  @Option({ flags: '--to <position>', description: 'check up to the checkpoint holding this log position' })
  parseTo(value: string) {
    return value;
  }

  @Option({ flags: '--public-key <file>', description: 'check the signatures with this PEM key (one kept apart), not the data folder’s' })
  parsePublicKey(value: string) {
    return value;
  }

  @Option({
    flags: '--strict',
    description: 'fail (exit 1) on events not yet sealed even while a process that seals is running',
  })
  parseStrict() {
    return true;
  }

  @Option({ flags: '--json', description: 'print the result as JSON (`passed`: what the exit code says; `sealerRunning`)' })
  parseJson() {
    return true;
  }
}
