import type Database from 'better-sqlite3';
import type { DocumentKeys } from './document-keys';
import { fileStatements } from './generation-files';

/**
 * What a disk generation writes to its file at once: documents as JSON (the latest of each), the
 * checkpoint they reached and the file's count of documents.
 */
export interface DocumentWrites {
  ids: string[];
  bodies: string[];
  checkpoint: string | null;
  documents: number;
}

/**
 * The transaction that writes {@link DocumentWrites} to a generation's file: each document's row,
 * its keys rows changed from the version on file (read back from the file, so that the writer need
 * not know which version that is), the checkpoint and the count, together or not at all. Run on the
 * view write thread: it imports only relative modules, node's and better-sqlite3's types.
 */
export function prepareDocumentWrites(db: Database.Database, keys: DocumentKeys): (writes: DocumentWrites) => void {
  const body = db.prepare('SELECT body FROM docs WHERE id = ?').pluck();
  const { upsert, saveCheckpoint, saveDocuments } = fileStatements(db);
  const addKey = db.prepare('INSERT OR IGNORE INTO keys (field, kind, value, id) VALUES (?, ?, ?, ?)');
  const dropKey = db.prepare('DELETE FROM keys WHERE field = ? AND kind = ? AND value = ? AND id = ?');
  const write = db.transaction(({ ids, bodies, checkpoint, documents }: DocumentWrites) => {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const before = body.get(id) as string | undefined;
      const had = before === undefined ? new Map() : keys.byText(JSON.parse(before) as object);
      const has = keys.byText(JSON.parse(bodies[i]) as object);
      for (const [text, [field, kind, value]] of had) if (!has.has(text)) dropKey.run(field, kind, value, id);
      upsert.run(id, bodies[i]);
      for (const [text, [field, kind, value]] of has) if (!had.has(text)) addKey.run(field, kind, value, id);
    }
    if (checkpoint !== null) saveCheckpoint.run(checkpoint);
    saveDocuments.run(documents);
  });
  return (writes) => write.immediate(writes);
}
