import type { Decider, DomainCommand, DomainEvent } from '../decider';
import type { EventMetadata, LogPosition, StreamRevision } from '../ports/event-store.port';
import type { RequestWrites } from '../read-your-writes';

/**
 * Who asks, and when: everything a command needs from outside the domain. A context given to
 * `handleCommand` may be given again (its commands' events then share one metadata object), and
 * its `now` may be replaced, but the caller object (`metadata`) is not changed in place once given:
 * give a new object instead.
 */
export interface CommandContext {
  now: Date;
  /** `writes`: the request's tracker, told each append (never in the events' metadata). */
  metadata: Omit<EventMetadata, 'occurredAt'> & { writes?: RequestWrites };
}

export interface CommandOutcome<S, E> {
  /** Events appended by this command (empty when the decider had nothing to say). */
  events: E[];
  /** State after the new events. */
  state: S;
  /** Stream revision after the command, or null for a stream that still does not exist. */
  revision: StreamRevision | null;
  /**
   * Log position of the last event its batch appended (see handleCommand); when the batch appended
   * nothing, of the stream's last event, which the outcome rests on (perhaps another process's,
   * not yet in the views: a caller waits for it as for its own); null for a stream without events.
   */
  position: LogPosition | null;
}

/** Options of `handleCommand`. */
export interface HandleOptions {
  /**
   * The stream's id was drawn a moment ago for this command (a new purchase, its coupons): decide
   * on the empty stream without reading it first. The append expects no stream, so if the stream
   * exists after all (a retry after a crash) it is refused and the batch decided again on a read.
   */
  freshStream?: boolean;
}

/** One command of a unit of work (see `handleCommands`): the stream it is decided on, and how. */
export interface CommandPart<
  S = unknown,
  C extends DomainCommand = DomainCommand,
  E extends DomainEvent = DomainEvent,
> extends HandleOptions {
  streamId: string;
  decider: Decider<S, C, E>;
  command: C;
  /**
   * The unit is written in the turns of this part's stream (one part of a unit has it; the first
   * when none does): the stream others contend for, such as a deal's inventory, whose waiting
   * commands and units go out together.
   */
  lane?: boolean;
}

/** A unit's part as the engine keeps it. */
export interface Part {
  streamId: string;
  decider: Decider<unknown, DomainCommand, DomainEvent>;
  command: DomainCommand;
  fresh: boolean;
}

/** A command or unit of work waiting for its lane's next write. */
export interface Waiting {
  /** The decider of the lane's stream (a batch has one). */
  decider: Decider<unknown, DomainCommand, DomainEvent>;
  /** The unit's commands in the order given; one command alone for `handleCommand`. */
  parts: Part[];
  context: CommandContext;
  /** Answers each part, in the order given. */
  resolve: (outcomes: Array<CommandOutcome<unknown, DomainEvent>>) => void;
  reject: (error: unknown) => void;
}
