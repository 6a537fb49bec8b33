import {
  AppendResult,
  EventStore,
  ExpectedRevision,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  SubscribeOptions,
  WrongExpectedRevision,
} from '@deals/kernel';
import Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { statSync } from 'node:fs';
import { openDurableDatabase } from '../../sqlite/open-durable-database';

interface Row {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

interface PendingAppend {
  streamId: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

const WIDTH = 20;
export const sqlitePosition = (n: number | bigint): LogPosition => String(n).padStart(WIDTH, '0');
const positionNumber = (p: LogPosition | null) => (p === null ? 0 : Number(p));

/** How often a subscription looks for events appended by another process (the CLI). */
const POLL_MS = 100;
const PAGE = 1000;
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The embedded event log: one SQLite file in WAL mode with `synchronous=FULL`, so an append is
 * acknowledged only once it is on disk. Appends that arrive in the same tick share one
 * `BEGIN IMMEDIATE` transaction (group commit): the disk allows a few thousand syncs a second, and
 * one sync per append would cap the whole service there. A conflict fails only its own append.
 * Several processes (server and CLI) may share the file; subscriptions see the other's appends
 * within {@link POLL_MS}.
 */
export class SqliteEventStore extends EventStore {
  readonly backend = 'sqlite';
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly walTimer: NodeJS.Timeout;
  private readonly statements: {
    insert: Database.Statement;
    lastRevision: Database.Statement;
    readStream: Database.Statement;
    readAll: Database.Statement;
    head: Database.Statement;
  };

  constructor(private readonly file: string) {
    super();
    this.db = openDurableDatabase(file);
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        stream_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        UNIQUE (stream_id, revision)
      )`);
    this.statements = {
      insert: this.db.prepare(
        'INSERT INTO events (id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      lastRevision: this.db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream_id = ?').pluck(),
      readStream: this.db.prepare('SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision'),
      readAll: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      head: this.db.prepare('SELECT MAX(position) FROM events').pluck(),
    };
    this.appended.setMaxListeners(0);
    this.walTimer = setInterval(() => this.truncateWalIfLarge(), 30_000).unref();
  }

  append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ streamId, events, expected, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  async readStream(streamId: string, fromRevision = 0): Promise<RecordedEvent[]> {
    return (this.statements.readStream.all(streamId, fromRevision) as Row[]).map(toRecorded);
  }

  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return (this.statements.readAll.all(positionNumber(after), maxCount) as Row[]).map(toRecorded);
  }

  subscribe({ after, onEvents, onError }: SubscribeOptions): LogSubscription {
    let position = after;
    let closed = false;
    let wake: (() => void) | null = null;
    const poke = () => wake?.();
    this.appended.on('appended', poke);
    const loop = (async () => {
      while (!closed) {
        try {
          const page = await this.readAll({ after: position, maxCount: PAGE });
          if (page.length > 0) {
            await onEvents(page);
            position = page[page.length - 1].position;
            continue;
          }
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
        this.appended.off('appended', poke);
        poke();
        await loop;
      },
    };
  }

  async head(): Promise<LogPosition | null> {
    const head = this.statements.head.get() as number | null;
    return head === null ? null : sqlitePosition(head);
  }

  async ping(): Promise<void> {
    this.statements.head.get();
  }

  async close(): Promise<void> {
    clearInterval(this.walTimer);
    while (this.pending.length || this.flushScheduled) await new Promise((r) => setImmediate(r));
    this.db.close();
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.flushScheduled = false;
    if (batch.length === 0) return;
    const outcomes: Array<AppendResult | WrongExpectedRevision> = [];
    try {
      this.db.transaction(() => {
        const revisions = new Map<string, number | null>();
        for (const request of batch) outcomes.push(this.write(request, revisions));
      }).immediate();
    } catch (error) {
      for (const request of batch) request.reject(error);
      return;
    }
    batch.forEach((request, i) => {
      const outcome = outcomes[i];
      if (outcome instanceof WrongExpectedRevision) request.reject(outcome);
      else request.resolve(outcome);
    });
    this.appended.emit('appended');
  }

  /** Runs inside the group transaction; `revisions` tracks streams already written in this group. */
  private write(request: PendingAppend, revisions: Map<string, number | null>): AppendResult | WrongExpectedRevision {
    const { streamId, events, expected } = request;
    let current = revisions.has(streamId)
      ? (revisions.get(streamId) as number | null)
      : (this.statements.lastRevision.get(streamId) as number | null);
    const matches =
      expected === 'any' || (expected === 'no_stream' ? current === null : current === expected);
    if (!matches) return new WrongExpectedRevision(streamId, expected, current ?? 'no_stream');
    let position = 0;
    for (const event of events) {
      current = current === null ? 0 : current + 1;
      const info = this.statements.insert.run(
        event.id,
        streamId,
        current,
        event.type,
        JSON.stringify(event.data),
        JSON.stringify(event.metadata),
      );
      position = Number(info.lastInsertRowid);
    }
    revisions.set(streamId, current);
    return { nextExpectedRevision: current as number, position: sqlitePosition(position) };
  }

  private truncateWalIfLarge(): void {
    try {
      if (statSync(`${this.file}-wal`).size > WAL_LIMIT_BYTES) this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // no WAL file yet, or a reader holds it: try again on the next tick
    }
  }
}

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    streamId: row.stream_id,
    revision: row.revision,
    position: sqlitePosition(row.position),
  };
}
