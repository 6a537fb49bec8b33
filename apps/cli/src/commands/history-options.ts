import { isoInstant } from '@deals/kernel';
import { CommandRunner, Option } from 'nest-commander';

export interface HistoryOptions {
  json?: boolean;
  asOf?: Date;
}

/** The options of the audit commands: `--json`, and `--as-of` to cut a history at an instant. */
export abstract class HistoryCommand extends CommandRunner {
  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }

  @Option({ flags: '--as-of <instant>', description: 'show the history up to this ISO 8601 instant' })
  parseAsOf(value: string): Date {
    const at = isoInstant(value);
    if (!at) throw new Error('--as-of needs an ISO 8601 instant: a date and time with Z or an offset (2026-06-15T12:00:00Z)');
    return at;
  }
}
