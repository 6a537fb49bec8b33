import type { Decider, DomainCommand, DomainEvent } from '../decider';
import type { CommandContext, CommandOutcome, CommandPart, HandleOptions } from '../command-engine/command';
import { handleCommand, handleCommands } from '../handle-command';
import type { EventStore } from '../ports/event-store.port';
import { currentTestClock } from './clock-scope';
import { testClockDecider, testClockStream } from './test-clock';

/**
 * A unit of work that records a money line dated `now` (a statement's line: a charge begun, a claim,
 * a resale, a refund asked, a card transaction), as it is written: under a test clock, with the
 * clock's record of it (`RecordClockWrite`) on the clock's stream, in the same atomic append. An
 * advance is then ordered after the line by the clock stream's expected revision (and a statement
 * that reads the clock past the line's day reads the line too), or the unit is refused because the
 * clock moved while the call ran. Out of a test clock, the unit as given: nothing more is read or written.
 */
export function datedUnit(parts: readonly CommandPart[], now: Date): CommandPart[] {
  const scope = currentTestClock();
  if (!scope) return [...parts];
  const { clockId } = scope;
  const record = { type: 'RecordClockWrite' as const, data: { clockId, at: now.toISOString() } };
  return [...parts, { streamId: testClockStream(clockId), decider: testClockDecider, command: record }];
}

/** `handleCommand` of a command that records a money line dated `context.now` (see `datedUnit`). */
export async function handleDatedCommand<S, C extends DomainCommand, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<S, C, E>,
  command: C,
  context: CommandContext,
  options: HandleOptions = {},
): Promise<CommandOutcome<S, E>> {
  if (!currentTestClock()) return handleCommand(store, streamId, decider, command, context, options);
  const part: CommandPart = { streamId, decider, command, freshStream: options.freshStream };
  const [outcome] = await handleCommands(store, datedUnit([part], context.now), context);
  return outcome as unknown as CommandOutcome<S, E>;
}
