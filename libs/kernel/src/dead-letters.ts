import type { LogPosition, RecordedEvent } from './ports/event-store.port';
import type { ViewDocument, ViewStore, ViewWriter } from './ports/view-store.port';
import type { Projection } from './projection';
import { serverUnavailable } from './server-unavailable';

/**
 * An event a projection could not apply, set aside so that the events after it are applied: its
 * fold threw, or the store refused its documents while it took the view's checkpoint without them.
 * Names and rules only: the error's message, never a document or a value of the event.
 */
export interface DeadLetter extends ViewDocument {
  projection: string;
  /** The event's position in the log (also `_id` and `_pos`: one letter a projection and position). */
  position: LogPosition;
  eventType: string;
  streamId: string;
  eventId: string;
  error: string;
  /** When it was set aside (ISO 8601). */
  recordedAt: string;
}

/** How a keeper of views sets events aside (see `ProjectionRunner`, `ProjectionDaemon`). */
export interface DeadLetterOptions {
  /**
   * Failures of the same batch, retried as ever, before its events are applied one at a time to
   * find those to set aside (a fold that throws is set aside at once). Default 3.
   */
  isolateAfter?: number;
  /** Told of each letter recorded (the service's metrics). */
  onDeadLetter?: (letter: DeadLetter) => void;
  now?: () => Date;
}

const PREFIX = 'dead_letters_';
/** The longest error message kept: a store's message names a rule in a line. */
const MESSAGE_CHARS = 300;
const ISOLATE_AFTER = 3;

/**
 * The collection of a projection's dead letters: one a projection, so that a rebuild of the view
 * rebuilds its letters with it (the letters of the events it applies now are gone with the old
 * generation, those that fail again are recorded again) and a rebuild of other views leaves it be.
 */
export const deadLetterCollection = (projection: string): string => `${PREFIX}${projection}`;

/** Whether `collection` holds a projection's dead letters (not a view a query reads). */
export const isDeadLetterCollection = (collection: string): boolean => collection.startsWith(PREFIX);

/** Declares the dead-letter collections of these projections (idempotent). */
export async function defineDeadLetters(views: ViewStore, projections: readonly string[]): Promise<void> {
  for (const name of projections) await views.define(deadLetterCollection(name), [], { keepInMemory: true });
}

/** A projection's open dead letters (those of its active generation), in log order. */
export async function listDeadLetters(views: ViewStore, projection: string): Promise<DeadLetter[]> {
  await defineDeadLetters(views, [projection]);
  return views.find<DeadLetter>(deadLetterCollection(projection), {}, { sort: { _id: 1 } });
}

/** Logs each letter once, as an error naming its projection, position and event type, and tells `onDeadLetter`. */
export function reportDeadLetters(
  letters: readonly DeadLetter[],
  logger: { error(message: string): void },
  options: DeadLetterOptions,
): void {
  for (const letter of letters) {
    logger.error(
      `projection ${letter.projection}: set aside the ${letter.eventType} event at ${letter.position} as a dead letter (${letter.error})`,
    );
    options.onDeadLetter?.(letter);
  }
}

/** A fold that threw (a defect of `evolve`): its event is set aside at once, never retried. */
export class FoldError extends Error {
  constructor(readonly error: unknown) {
    super(`the fold failed: ${messageOf(error)}`, { cause: error });
  }
}

/** The error's name and message, cut short: a store's detail (which may quote a value) is left out. */
function messageOf(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text;
}

function deadLetter(projection: string, event: RecordedEvent, error: unknown, now: Date): DeadLetter {
  return {
    _id: event.position,
    _pos: event.position,
    projection,
    position: event.position,
    eventType: event.type,
    streamId: event.streamId,
    eventId: event.id,
    error: messageOf(error instanceof FoldError ? error.error : error),
    recordedAt: now.toISOString(),
  };
}

/**
 * Decides when a failing batch is applied one event at a time: a fold that threw, at once; a
 * store's failure, once the same batch failed `isolateAfter` times in a row (an outage passes with
 * retries; a refused document does not).
 */
export class PoisonWatch {
  private failing: { first: LogPosition; times: number } | null = null;

  constructor(private readonly isolateAfter = ISOLATE_AFTER) {}

  /** Whether this failure of the batch starting at `events[0]` calls for applying it event by event. */
  failed(events: readonly RecordedEvent[], error: unknown): boolean {
    if (error instanceof FoldError) return true;
    const first = events[0].position;
    this.failing = this.failing?.first === first ? { first, times: this.failing.times + 1 } : { first, times: 1 };
    return this.failing.times >= this.isolateAfter;
  }

  /** The batch went through. */
  passed(): void {
    this.failing = null;
  }
}

/**
 * Whether a store's failure passes by itself, whatever the event: a server away or past a bound (a
 * statement or lock timeout), a deadlock or a serialization failure (SQLSTATE class 40), a busy file.
 * Such an event is retried as ever, never set aside: a letter would skip a good event until an operator acts.
 */
export function passingFailure(error: unknown): boolean {
  if (serverUnavailable(error)) return true;
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code } = e as { code?: unknown };
    if (typeof code === 'string' && (/^40[0-9A-Z]{3}$/.test(code) || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')))
      return true;
  }
  return false;
}

/** A writer that may remember documents it read or folded (forgotten after a failure: a fold may have changed one in place). */
type Writer = ViewWriter & { forgetAll?(): void; remember?(documents: readonly ViewDocument[]): void };

/**
 * Applies `events` to one projection one at a time, each committed with its position as the view's
 * checkpoint. An event whose fold throws, or whose documents the store refuses twice (not for a
 * failure that passes by itself, see `passingFailure`), is set aside:
 * its letter and the view's checkpoint at its position are committed together (the letter first,
 * where the store commits writer by writer), so the letter is stored before the view moves past
 * it. If the store refuses that too, it is down (no event's fault): the error is thrown and
 * nothing is set aside. Ends with the checkpoint at `through`. Returns the documents committed and
 * the letters recorded.
 */
export async function applyOneByOne(
  fold: (projection: Projection, writer: ViewWriter, events: readonly RecordedEvent[]) => Promise<ViewDocument[]>,
  target: { projection: Projection; writer: Writer; letters: ViewWriter; views: ViewStore; now: () => Date },
  events: readonly RecordedEvent[],
  through: LogPosition,
): Promise<{ documents: ViewDocument[]; letters: DeadLetter[] }> {
  const { projection, writer, letters, views } = target;
  const handled = new Set(projection.handles);
  const documents: ViewDocument[] = [];
  const recorded: DeadLetter[] = [];
  for (const event of events) {
    if (!handled.has(event.type)) continue;
    let failure: unknown = null;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const changed = await fold(projection, writer, [event]);
        await views.commitAll([{ writer, documents: changed, checkpoint: event.position }]);
        writer.remember?.(changed);
        documents.push(...changed);
        failure = null;
        break;
      } catch (error) {
        writer.forgetAll?.();
        failure = error;
        if (error instanceof FoldError) break;
      }
    }
    if (failure === null) continue;
    // A failure that passes by itself is no event's fault: thrown, retried as a store that is down is.
    if (!(failure instanceof FoldError) && passingFailure(failure)) throw failure;
    const letter = deadLetter(projection.name, event, failure, target.now());
    await views.commitAll([
      // On disk before the view's checkpoint passes the event: a crash between the two records it again.
      { writer: letters, documents: [letter], checkpoint: event.position, durable: true },
      { writer, documents: [], checkpoint: event.position },
    ]);
    recorded.push(letter);
  }
  await views.commitAll([{ writer, documents: [], checkpoint: through }]);
  return { documents, letters: recorded };
}
