import { LogSubscription, NewEvent, RecordedEvent, SubscribeOptions } from '@deals/kernel';
import { EventEmitter } from 'node:events';
import { positionNumber, Row, SqliteLogReads, toRecorded } from './sqlite-event-log.reads';

/** How often a subscription looks for events appended by another process (the CLI). */
const POLL_MS = 100;
const PAGE = 1000;
/** Rows of this process's own recent appends kept at most for the subscriptions (a few seconds' worth). */
const OWN_ROWS = 20_000;

/**
 * The subscriptions of one store, and what they read from: pages of the file, or of the rows this
 * process appended itself (kept as they were written), woken by each commit of this process and
 * else polling for another process's appends every {@link POLL_MS}.
 */
export class SqliteLogFeed {
  private readonly appended = new EventEmitter();
  /**
   * Pages the subscriptions read in this turn of the loop, by position: the projections follow the
   * log together, so one read and one decoding of a new page serves them all. Dropped at the end
   * of the turn and on every commit of this process (the page may have grown).
   */
  private readonly livePages = new Map<number, { events: RecordedEvent[]; own: boolean }>();
  /**
   * Rows this process appended lately, by position, exactly as the file holds them (an append's
   * events take consecutive positions, ending at the one its write reports). The subscriptions
   * read new pages from here rather than query the file for what this process just wrote; a
   * position missing here (another process's append, or one pruned) sends them to the file.
   * A row goes once every subscription has read it (at the latest when {@link OWN_ROWS} are kept):
   * kept for seconds, every row outlived the young generation's collections, and copying them to
   * the old one and collecting them there was much of the event loop's time spent on garbage.
   */
  private readonly ownRows = new Map<number, Row>();
  /** Where each open subscription has read to. */
  private readonly cursors = new Set<{ position: number }>();
  /** Commits of this process so far: a subscription busy delivering when one came knows to look again. */
  private commits = 0;

  constructor(private readonly reads: SqliteLogReads) {
    this.appended.setMaxListeners(0);
  }

  /** This process committed appends: every subscription looks again. */
  committed(): void {
    this.commits++;
    this.livePages.clear();
    this.appended.emit('appended');
  }

  subscribe({ after, onEvents, onError }: SubscribeOptions): LogSubscription {
    let position = after;
    const cursor = { position: positionNumber(after) };
    this.cursors.add(cursor);
    let closed = false;
    let wake: (() => void) | null = null;
    const poke = () => wake?.();
    this.appended.on('appended', poke);
    const loop = (async () => {
      // Right after a page of this process's own appends, a missing next row means none was
      // appended here since: the file is read only after a wait (another process's appends are
      // found then, within POLL_MS, as before), not once more for every page.
      let ownPageDelivered = false;
      let commitsSeen = this.commits;
      while (!closed) {
        try {
          // A commit since the last look may sit behind another process's append: the file then too.
          const fileToo = !ownPageDelivered || this.commits !== commitsSeen;
          commitsSeen = this.commits;
          const { events: page, own } = this.livePage(positionNumber(position), fileToo);
          ownPageDelivered = own && page.length > 0;
          if (page.length > 0) {
            await onEvents(page);
            position = page[page.length - 1].position;
            cursor.position = positionNumber(position);
            if (!closed) this.forgetRowsRead();
            continue;
          }
          // Woken while it was delivering (no one was listening then): look again rather than sleep.
          if (this.commits !== commitsSeen) continue;
        } catch (error) {
          onError?.(error);
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    })();
    return {
      close: async () => {
        closed = true;
        this.cursors.delete(cursor);
        this.appended.off('appended', poke);
        poke();
        await loop;
      },
    };
  }

  /** Keeps the rows of an own append, written at `lastRevision` and `lastPosition`, for the subscriptions. */
  remember(
    streamId: string,
    given: ReadonlyArray<NewEvent | undefined>,
    rows: ReadonlyArray<[string, string, string, string]>,
    lastRevision: number,
    lastPosition: number,
  ): void {
    const first = lastPosition - rows.length + 1;
    rows.forEach(([id, type, data, metadata], i) =>
      this.ownRows.set(first + i, {
        position: first + i,
        id,
        stream_id: streamId,
        revision: lastRevision - rows.length + 1 + i,
        type,
        data,
        metadata,
        given: given[i],
      }),
    );
    if (this.ownRows.size > OWN_ROWS) {
      for (const position of this.ownRows.keys()) {
        this.ownRows.delete(position);
        if (this.ownRows.size <= OWN_ROWS / 2) break;
      }
    }
  }

  /** Drops the own rows every open subscription has read (rows are kept in the order of their positions). */
  private forgetRowsRead(): void {
    // With no subscription open, the rows stay (up to OWN_ROWS) for the next one.
    if (this.cursors.size === 0) return;
    let slowest = Infinity;
    for (const { position } of this.cursors) if (position < slowest) slowest = position;
    for (const position of this.ownRows.keys()) {
      if (position > slowest) break;
      this.ownRows.delete(position);
    }
  }

  /** The rows after `after` that this process appended itself, as far as they run without a gap. */
  private ownPage(after: number): Row[] {
    const rows: Row[] = [];
    for (let position = after + 1; rows.length < PAGE; position++) {
      const row = this.ownRows.get(position);
      if (!row) break;
      rows.push(row);
    }
    return rows;
  }

  /** The next page after `after`: this process's own rows when they follow on, else (if `fileToo`) the file's. */
  private livePage(after: number, fileToo: boolean): { events: RecordedEvent[]; own: boolean } {
    let page = this.livePages.get(after);
    if (!page) {
      const own = this.ownPage(after);
      if (own.length === 0 && !fileToo) return { events: [], own: false };
      page = { events: (own.length > 0 ? own : this.reads.rowsAfter(after, PAGE)).map(toRecorded), own: own.length > 0 };
      if (this.livePages.size === 0) setImmediate(() => this.livePages.clear());
      this.livePages.set(after, page);
    }
    return page;
  }
}
