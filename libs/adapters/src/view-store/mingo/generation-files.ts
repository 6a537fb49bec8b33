import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** A generation file's tables: its documents, and what is kept of them (the checkpoint, the count, the keyed fields). */
export const GENERATION_TABLES = `
  CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`;

/** A collection's generation as a status tells it. */
export interface GenerationStatus {
  collection: string;
  generation: string;
  checkpoint: string | null;
  documents: number;
  bytes: number;
}

/**
 * Where the embedded view store keeps each collection: one SQLite file per generation
 * (`<collection>@<generation>.sqlite`) and a pointer file (`<collection>.current`) naming the
 * active one. Generation names sort by creation time, so leftovers older than the active one can be
 * removed without touching a rebuild still in progress.
 */
export class GenerationFiles {
  static readonly INITIAL = 'g0000000000';

  constructor(readonly dir: string) {}

  static fresh(): string {
    return `g${Date.now().toString(36).padStart(10, '0')}${randomBytes(3).toString('hex')}`;
  }

  file(collection: string, generation: string): string {
    return join(this.dir, `${collection}@${generation}.sqlite`);
  }

  /** The active generation, as the pointer file says (the initial one when there is none yet). */
  active(collection: string): string {
    const pointer = join(this.dir, `${collection}.current`);
    return existsSync(pointer) ? readFileSync(pointer, 'utf8').trim() : GenerationFiles.INITIAL;
  }

  /** Points the collection at `generation`; a rename, so readers see the old or the new name, whole. */
  activate(collection: string, generation: string): void {
    const pointer = join(this.dir, `${collection}.current`);
    const temporary = `${pointer}.${process.pid}.tmp`;
    writeFileSync(temporary, generation);
    renameSync(temporary, pointer);
  }

  /** Removes a generation's files; off the event loop (a large file's unlink takes a second). */
  async remove(collection: string, generation: string): Promise<void> {
    const base = this.file(collection, generation);
    // The database file last: one left behind (a process that exits meanwhile) is found and removed at a later start.
    for (const suffix of ['-wal', '-shm', '']) await rm(`${base}${suffix}`, { force: true });
  }

  /** Removes generations older than the active one (newer ones may be a rebuild in progress). */
  removeStale(collection: string): void {
    const active = this.active(collection);
    const prefix = `${collection}@`;
    for (const name of readdirSync(this.dir)) {
      if (!name.startsWith(prefix) || !name.endsWith('.sqlite')) continue;
      const generation = name.slice(prefix.length, -'.sqlite'.length);
      // What cannot be removed now is removed at a later start.
      if (generation < active) this.remove(collection, generation).catch(() => undefined);
    }
  }

  /** What a generation's file and its WAL take on disk (0 when not written yet). */
  bytesOnDisk(collection: string, generation: string): number {
    const file = this.file(collection, generation);
    return [file, `${file}-wal`].reduce((n, path) => n + (existsSync(path) ? statSync(path).size : 0), 0);
  }

  /** A collection's status read from its active file, without loading its documents. */
  statusOnFile(collection: string): GenerationStatus {
    const generation = this.active(collection);
    const file = this.file(collection, generation);
    if (!existsSync(file)) return { collection, generation, checkpoint: null, documents: 0, bytes: 0 };
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
      const documents = tables.has('docs') && tables.has('meta') ? documentsOnFile(db) : 0;
      const checkpoint = tables.has('meta') ? checkpointOnFile(db) : null;
      return { collection, generation, checkpoint, documents, bytes: this.bytesOnDisk(collection, generation) };
    } finally {
      db.close();
    }
  }
}

/** The checkpoint a generation's file holds (null before its first). */
export const checkpointOnFile = (db: Database.Database): string | null =>
  (db.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get() as string | undefined) ?? null;

/**
 * How many documents a generation's file holds, as its saves keep it in `meta` (`documents`), so
 * that a status need not count a table that grows with the history; counted in a file written
 * before they kept it.
 */
export function documentsOnFile(db: Database.Database): number {
  const kept = db.prepare("SELECT value FROM meta WHERE key = 'documents'").pluck().get() as string | undefined;
  return kept === undefined ? (db.prepare('SELECT count(*) FROM docs').pluck().get() as number) : Number(kept);
}

/** The statements that write a generation's file: a document (by id and JSON), the checkpoint, the count (see {@link documentsOnFile}). */
export interface FileStatements {
  upsert: Database.Statement;
  saveCheckpoint: Database.Statement;
  saveDocuments: Database.Statement;
}

export const fileStatements = (db: Database.Database): FileStatements => ({
  upsert: db.prepare('INSERT INTO docs (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body'),
  saveCheckpoint: db.prepare(
    "INSERT INTO meta (key, value) VALUES ('checkpoint', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  ),
  saveDocuments: db.prepare("INSERT INTO meta (key, value) VALUES ('documents', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
});
