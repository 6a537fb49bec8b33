import { DeadLetter, EventStore, listDeadLetters, Projection, rebuildProjections, ViewStore } from '@deals/kernel';
import { ProjectionHost } from '@deals/runtime';
import { Command, CommandRunner, Option } from 'nest-commander';
import { chosenProjections } from './projections.commands';

interface DeadLettersOptions {
  replay?: boolean;
  json?: boolean;
}

@Command({
  name: 'projections:dead-letters',
  arguments: '[names...]',
  argsDescription: { names: 'the views whose dead letters to list (all of them when left out)' },
  description:
    'list the events views set aside because they could not apply them (dead letters); --replay rebuilds the views that have any, applying them again',
})
export class ProjectionsDeadLettersCommand extends CommandRunner {
  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly host: ProjectionHost,
  ) {
    super();
  }

  async run(names: string[], options: DeadLettersOptions): Promise<void> {
    const chosen = chosenProjections(this.host.projections, names);
    let letters = await this.list(chosen);
    if (options.replay) {
      // A letter's event cannot be applied alone onto documents later events moved: its views are rebuilt, the whole log applied again.
      const rebuilt = chosen.filter((p) => letters.some((letter) => letter.projection === p.name));
      if (rebuilt.length) {
        const done = await rebuildProjections(this.store, this.views, rebuilt);
        process.stderr.write(
          `rebuilt ${rebuilt.map((p) => p.name).join(', ')} from ${done.applied} events and switched to them; ${done.setAside} set aside again.\n`,
        );
        letters = await this.list(chosen);
      }
    }
    process.stdout.write(options.json ? `${JSON.stringify(letters.map(({ _id, _pos, ...letter }) => letter))}\n` : format(letters));
  }

  private async list(projections: readonly Projection[]): Promise<DeadLetter[]> {
    return (await Promise.all(projections.map((p) => listDeadLetters(this.views, p.name)))).flat();
  }

  @Option({
    flags: '--replay',
    description: 'rebuild the views that have dead letters (the API serves the old ones until the switch), then list those left',
  })
  parseReplay() {
    return true;
  }

  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }
}

/** A line a letter: where and what the event is, when it was set aside, and why. */
function format(letters: readonly DeadLetter[]): string {
  if (!letters.length) return 'no dead letters\n';
  return letters
    .map((l) => `${l.projection}  ${l.position}  ${l.eventType}  stream ${l.streamId}  event ${l.eventId}  ${l.recordedAt}  ${l.error}\n`)
    .join('');
}
