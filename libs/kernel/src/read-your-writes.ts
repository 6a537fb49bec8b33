import type { LogPosition, NewEvent } from './ports/event-store.port';
import type { ViewDocument } from './ports/view-store.port';

/**
 * Read your writes: a call's response waits until the views it reads include the call's own
 * events. The wait is bounded; past it the response goes out with what the views hold.
 */
export abstract class ViewProgress {
  abstract waitFor(collections: string[], position: LogPosition | null): Promise<void>;

  /** Whether `collection` has applied the log up to `position`, waiting for it as {@link waitFor} does. */
  abstract shows(collection: string, position: LogPosition | null): Promise<boolean>;

  /**
   * Waits until every view that shows an event type of `writes` has applied the log up to the
   * latest position written of the types it shows (bounded, as {@link waitFor}); at once when
   * nothing was written.
   */
  abstract waitForWrites(writes: RequestWrites): Promise<void>;

  /**
   * Leaves the views `writes` needs to `reader`'s next reads instead of the answer: each view that
   * shows a type written (but those in `writes.shown`) is remembered with the latest position
   * written of the types it shows, and {@link readerWaits} waits for it.
   */
  abstract deferWrites(reader: string, writes: RequestWrites): void;

  /**
   * Waits until the views that `reader`'s deferred writes need (of `views` only, when given) show
   * them, at most until the bound of {@link waitFor} after the latest of those writes (an answer
   * would have waited no longer); null when nothing is deferred for them, or it lapsed.
   */
  abstract readerWaits(reader: string, views?: readonly string[]): Promise<void> | null;

  /**
   * Tells `listener` of the documents each live batch of `collection` commits, in the process that
   * keeps that view (elsewhere never). A reaction that must miss none also reads the view when it
   * starts: a process stopped between a commit and its listener told nobody.
   */
  abstract onCommitted(collection: string, listener: (documents: readonly ViewDocument[]) => void): void;

  /**
   * Tells `listener` each time this process takes on keeping `collection` while it runs (its lease
   * moved here from a process stopped, killed or with more than its part): a reaction that reads
   * the view at start reads it again then, for what the other process committed and told nobody.
   */
  abstract onAdopted(collection: string, listener: () => void): void;
}

/**
 * What one request's commands appended: the latest position written of each event type.
 * `handleCommand` notes every append of a command whose caller carries it, so that the answer, a
 * refusal as much as a success, goes out only once the views show it all
 * (`ViewProgress.waitForWrites`). A view waits only for the types it shows: a later write it does
 * not show (a charge lock ended) does not hold the answer back.
 */
export class RequestWrites {
  /** The latest position of each event type written. */
  readonly positions = new Map<string, LogPosition>();
  /**
   * Views that hold this request's writes already (its units' inline projections' documents written
   * with its events, or written ahead, `ViewStore.writeAhead`): its answer waits for none of them.
   */
  readonly shown = new Set<string>();
  /**
   * The answer was built from the decision itself: the views not {@link shown} are left to the
   * caller's next reads (`ViewProgress.deferWrites`) instead of holding this answer back.
   */
  deferred = false;
  /**
   * The documents of inline projections this request's units folded (by `<collection> <id>`), and
   * whether each unit's write wrote them: a later unit of the request folds onto them, and its
   * answer may read them (`inlineDocument`).
   */
  readonly folded = new Map<string, { doc: ViewDocument; written: boolean }>();

  note(position: LogPosition, events: readonly Pick<NewEvent, 'type' | 'data'>[]): void {
    for (const { type } of events) {
      const known = this.positions.get(type);
      if (known === undefined || position > known) this.positions.set(type, position);
    }
  }

  /** Never part of what a caller is serialized into. */
  toJSON(): undefined {
    return undefined;
  }
}

/** Who caused a command: goes into every event's metadata (`writes`, the request's tracker, does not). */
export interface CommandCaller {
  partnerId?: string;
  actor: string;
  requestId?: string;
  correlationId?: string;
  writes?: RequestWrites;
}

/** A caller acting for one partner: every partner-scoped command takes this. */
export type PartnerCaller = CommandCaller & { partnerId: string };

export const OPERATOR: CommandCaller = { actor: 'operator' };
