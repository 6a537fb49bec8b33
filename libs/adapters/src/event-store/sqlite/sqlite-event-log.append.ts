import { AppendResult, ExpectedRevision, freezeJson, LoopSlices, NewEvent, StreamAppend, WrongExpectedRevision } from '@deals/kernel';
import { SqliteWriteThread, WriteOutcomeUnknown } from '../../sqlite/write-thread';
import { AppendAllReply, AppendReply, AppendWritten, decodeAppendReply, encodeAppend } from './sqlite-event-log.writes';
import { sqlitePosition, SqliteLogReads } from './sqlite-event-log.reads';
import { SqliteLogFeed } from './sqlite-event-log.subscription';

/** Characters of events' data encoded in one turn of the event loop. */
const ENCODED_A_SLICE = 1024 * 1024;
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

const NOT_ENCODED_YET = Symbol('not encoded yet');

/** An append as the write thread takes it: its rows, and the events the subscriptions may be given as they are. */
interface EncodedAppend {
  streamId: string;
  expected: ExpectedRevision;
  rows: Array<[string, string, string, string]>;
  given: Array<NewEvent | undefined>;
}
/**
 * Metadata texts kept at most (cleared when full). A purchase's commands share one metadata object
 * (or three, see handleCommand); the 50 purchases of the bench in flight hold ~150.
 */
const RECENT_METADATA = 1024;

/**
 * The log's appends: encoded on this thread, committed by the write thread in pipelined groups (one
 * transaction and one sync for every append that arrived while the previous group was being
 * written), their rows kept for the subscriptions (`feed`) before these are woken.
 */
export class SqliteLogAppends {
  readonly writer: SqliteWriteThread;
  /** The JSON of metadata objects appended lately (frozen ones; cleared when full, see `metadataText`). */
  private readonly metadataTexts = new Map<object, string>();

  constructor(
    private readonly file: string,
    private readonly reads: SqliteLogReads,
    private readonly feed: SqliteLogFeed,
    /** Told of each group the write thread committed: how many appends, in how long. */
    onCommitted: (appends: number, seconds: number) => void,
  ) {
    this.writer = new SqliteWriteThread({
      file,
      durability: 'full',
      programs: require.resolve('./sqlite-event-log.writes'),
      walLimitBytes: WAL_LIMIT_BYTES,
    });
    this.writer.onCommitted = (requests, seconds) => {
      onCommitted(requests, seconds);
      this.feed.committed();
    };
  }

  /** One stream's append: the write thread's program for one. */
  async appendOne({ streamId, events, expected }: StreamAppend): Promise<AppendResult> {
    const { rows, given } = await this.encode(events);
    return this.appendRows({ streamId, expected, rows, given }, 2);
  }

  /** One program of the write thread for all the appends: in one savepoint of its group, so all or none. */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const encoded: EncodedAppend[] = [];
    for (const { streamId, events, expected } of appends) encoded.push({ streamId, expected, ...(await this.encode(events)) });
    return this.appendAllRows(encoded, 2);
  }

  /**
   * An append's rows as the write thread takes them, and the events the subscriptions may be given
   * as they are. A command's events share one metadata object, and so may several commands
   * (handleCommand): it is encoded once. Many megabytes (a bulk job's items) are encoded with a turn
   * of the event loop after each megabyte.
   */
  private async encode(events: NewEvent[]): Promise<Pick<EncodedAppend, 'rows' | 'given'>> {
    let lastMetadata: unknown = NOT_ENCODED_YET;
    let metadataJson = '';
    const slices = new LoopSlices(ENCODED_A_SLICE);
    const rows: Array<[string, string, string, string]> = [];
    for (const e of events) {
      if (e.metadata !== lastMetadata) metadataJson = this.metadataText(e, (lastMetadata = e.metadata));
      const data = jsonText(e, 'data', e.data);
      rows.push([e.id, e.type, data, metadataJson]);
      if (events.length > 1) await slices.spend(data.length);
    }
    // Checked (and frozen) as they are encoded: what the subscriptions get is then what was written,
    // whatever the appender does afterwards and whenever they read it.
    const given = events.map((e) => (freezeJson(e.data) && freezeJson(e.metadata) ? e : undefined));
    given.forEach((e, i) => e && this.rememberMetadataText(e.metadata, rows[i][3]));
    return { rows, given };
  }

  /** The append, made again (up to `attempts` in all) while a write thread stops before it and it is not in the file. */
  private async appendRows(append: EncodedAppend, attempts: number): Promise<AppendResult> {
    const { streamId, rows, given, expected } = append;
    let outcome: AppendWritten;
    try {
      const reply = await this.writer.run<AppendReply>('append', encodeAppend({ streamId, events: rows, expected }), (answer) => {
        // Kept before the subscriptions are woken, so that they find these rows here.
        if (answer[0] === 1) this.feed.remember(streamId, given, rows, answer[1], answer[2]);
      });
      outcome = decodeAppendReply(reply);
    } catch (error) {
      if (!(error instanceof WriteOutcomeUnknown)) throw error;
      const committed = this.committedAppends([append]);
      if (committed) return committed[0];
      // Not written, and the stopped thread can no longer write it: made again on a new one.
      if (attempts > 1) return this.appendRows(append, attempts - 1);
      throw new Error(`${this.file}: the write thread stopped before committing an append to ${streamId}; nothing was written`, {
        cause: error,
      });
    }
    if (!outcome.written) throw new WrongExpectedRevision(streamId, expected, outcome.actual ?? 'no_stream');
    return { nextExpectedRevision: outcome.revision, position: sqlitePosition(outcome.position) };
  }

  /** {@link appendRows} for several streams at once, all or none. */
  private async appendAllRows(appends: EncodedAppend[], attempts: number): Promise<AppendResult[]> {
    let reply: AppendAllReply;
    try {
      const list = appends.map(({ streamId, rows, expected }) => encodeAppend({ streamId, events: rows, expected }));
      reply = await this.writer.run<AppendAllReply>('appendAll', list, (answer) => {
        if (answer[0] === 1)
          appends.forEach((a, i) => this.feed.remember(a.streamId, a.given, a.rows, answer[1 + 2 * i], answer[2 + 2 * i]));
      });
    } catch (error) {
      if (!(error instanceof WriteOutcomeUnknown)) throw error;
      const committed = this.committedAppends(appends);
      if (committed) return committed;
      if (attempts > 1) return this.appendAllRows(appends, attempts - 1);
      const streams = appends.map((a) => a.streamId).join(', ');
      throw new Error(`${this.file}: the write thread stopped before committing an append to ${streams}; nothing was written`, {
        cause: error,
      });
    }
    if (reply[0] === 0) {
      const { streamId, expected } = appends[reply[1]];
      throw new WrongExpectedRevision(streamId, expected, reply[2] === -1 ? 'no_stream' : reply[2]);
    }
    return appends.map((_, i) => ({ nextExpectedRevision: reply[1 + 2 * i], position: sqlitePosition(reply[2 + 2 * i]) }));
  }

  /**
   * An event's metadata as JSON: the text kept for this very object when it was appended before
   * (and frozen then: see `rememberMetadataText`), else encoded now.
   */
  private metadataText(event: NewEvent, metadata: unknown): string {
    const known = metadata !== null && typeof metadata === 'object' ? this.metadataTexts.get(metadata) : undefined;
    return known ?? jsonText(event, 'metadata', metadata);
  }

  /** Keeps the text of a metadata object `freezeJson` passed (frozen: it can no longer change) for the next appends that carry it. */
  private rememberMetadataText(metadata: unknown, text: string): void {
    if (metadata === null || typeof metadata !== 'object' || this.metadataTexts.has(metadata)) return;
    if (this.metadataTexts.size >= RECENT_METADATA) this.metadataTexts.clear();
    this.metadataTexts.set(metadata, text);
  }

  /**
   * The write thread stopped before answering these appends (it has exited, so nothing more will be
   * committed by it): the file tells whether they were committed (all of them, or none: one
   * program), by their events' ids (UUIDs, unique); null when they were not.
   */
  private committedAppends(appends: ReadonlyArray<Pick<EncodedAppend, 'streamId' | 'rows'>>): AppendResult[] | null {
    const results: AppendResult[] = [];
    for (const { streamId, rows } of appends) {
      const last = this.reads.eventInStream(streamId, rows[rows.length - 1][0]);
      if (!last) return null;
      results.push({ nextExpectedRevision: last.revision, position: sqlitePosition(last.position) });
    }
    // Committed: the subscriptions may not have seen it (they were woken by no answer).
    this.feed.committed();
    return results;
  }
}

/**
 * A part of an event as JSON text. A value JSON has no text for (`undefined`, a function) is
 * refused before anything is written: stored, its row could never be read back.
 */
function jsonText(event: NewEvent, part: 'data' | 'metadata', value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (typeof text !== 'string')
    throw new TypeError(`event ${event.type} (${event.id}): its ${part} has no JSON form; nothing was appended`);
  return text;
}
