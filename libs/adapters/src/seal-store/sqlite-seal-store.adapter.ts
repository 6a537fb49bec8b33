import { EventSeal, SealRaced, SealStore, SignedCheckpoint } from '@deals/kernel';
import Database from 'better-sqlite3';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { processAlive } from '../process-alive';
import { openDurableDatabase } from '../sqlite/open-durable-database';
import { toCheckpoint, toSeal } from './seal-rows';
import { prepareSealStatements } from './sqlite-seal-schema';

/**
 * The embedded seal store: a file of the data folder (`seals.sqlite`) beside the log's, written by
 * the one process that keeps the views (a checkpoint and its seals in one transaction). That process
 * names itself in `sealer.pid` beside it while it runs: a file whose process is gone (a kill -9)
 * says no sealer runs.
 */
export class SqliteSealStore extends SealStore {
  private programs: ReturnType<typeof prepareSealStatements> | null = null;
  private db: Database.Database | null = null;
  private declared = false;

  constructor(readonly file: string) {
    super();
  }

  /** The file naming the process that seals this folder's log. */
  private get sealerFile(): string {
    return join(dirname(this.file), 'sealer.pid');
  }

  private sealerPid(): number | null {
    try {
      const pid = Number.parseInt(readFileSync(this.sealerFile, 'utf8'), 10);
      return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  }

  /** Opened on first use. */
  private open(): ReturnType<typeof prepareSealStatements> {
    if (this.programs === null) {
      this.db = openDurableDatabase(this.file);
      this.programs = prepareSealStatements(this.db);
    }
    return this.programs;
  }

  async lastCheckpoint(): Promise<SignedCheckpoint | null> {
    const row = this.open().last.get();
    return row ? toCheckpoint(row) : null;
  }

  async streamLinks(streamIds: readonly string[]): Promise<Map<string, { revision: number; link: string }>> {
    const links = new Map<string, { revision: number; link: string }>();
    const { streamLink } = this.open();
    for (const streamId of streamIds) {
      const row = streamLink.get(streamId);
      if (row) links.set(streamId, { revision: Number(row.revision), link: row.link });
    }
    return links;
  }

  async write(checkpoint: SignedCheckpoint, seals: readonly EventSeal[]): Promise<void> {
    if (!this.open().write(checkpoint, seals)) throw new SealRaced(checkpoint.number);
  }

  async checkpoints(from: number, limit: number): Promise<SignedCheckpoint[]> {
    return this.open().checkpoints.all(from, limit).map(toCheckpoint);
  }

  async sealsOf(checkpoint: number): Promise<EventSeal[]> {
    return this.open().sealsOf.all(checkpoint).map(toSeal);
  }

  async sealOf(streamId: string, revision: number): Promise<EventSeal | null> {
    const row = this.open().sealOf.get(streamId, revision);
    return row ? toSeal(row) : null;
  }

  async sealsOfStream(streamId: string): Promise<EventSeal[]> {
    return this.open().sealsOfStream.all(streamId).map(toSeal);
  }

  async declareSealer(): Promise<void> {
    const named = this.sealerPid();
    if (named === process.pid) return void (this.declared = true);
    // Another live process seals this folder (a second start that is refused must not hide it).
    if (named !== null && processAlive(named)) return;
    writeFileSync(this.sealerFile, `${process.pid}\n`, { mode: 0o600 });
    this.declared = true;
  }

  async sealerRunning(): Promise<boolean> {
    const pid = this.sealerPid();
    return pid !== null && processAlive(pid);
  }

  async close(): Promise<void> {
    if (this.declared && this.sealerPid() === process.pid) rmSync(this.sealerFile, { force: true });
    this.declared = false;
    this.db?.close();
    [this.db, this.programs] = [null, null];
  }
}
