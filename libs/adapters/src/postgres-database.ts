import { Client, DatabaseError, escapeIdentifier } from 'pg';
import { parse } from 'pg-connection-string';
import { CONNECT_TIMEOUT_MS, sessionClient } from './postgres-pool';

/** A start that cannot go on, told in one line an operator can act on (no stack). */
export class DatabaseMissingError extends Error {}

/** SQLSTATEs: the database named does not exist; made meanwhile by another process (two ways); not allowed. */
const INVALID_CATALOG_NAME = '3D000';
const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Makes the database `url` names when the server says it does not exist, from the server's
 * `postgres` database, so that a first start needs no `createdb`. The URL is read by the driver's
 * own parser, so the name made is the one the driver then connects to (a socket path in `host=`,
 * escapes in the name). Two processes starting together may both try: the one that loses finds
 * it made. A role that may not make databases stops the start with a message saying what to run.
 * Any other failure (the server away, a refused password, a URL the driver cannot read) is left
 * to the adapters, which meet it as they would at any time.
 */
export async function ensurePostgresDatabase(url: string): Promise<'existed' | 'created' | 'unanswered'> {
  let server: ReturnType<typeof parse>;
  try {
    server = parse(url);
  } catch {
    return 'unanswered';
  }
  try {
    await connected(sessionClient(url), async () => undefined);
    return 'existed';
  } catch (error) {
    if (!(error instanceof DatabaseError) || error.code !== INVALID_CATALOG_NAME) return 'unanswered';
  }
  // A URL that names no database leaves the choice to the driver (PGDATABASE, the user's name): not made here.
  const name = server.database;
  if (!name) return 'unanswered';
  const maintenance = new Client({ ...(server as object), database: 'postgres', connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await connected(maintenance, (client) => client.query(`CREATE DATABASE ${escapeIdentifier(name)}`));
    return 'created';
  } catch (error) {
    // Made meanwhile by another process: refused as a duplicate, or as a unique violation of the
    // catalogue when both statements ran at once.
    if (error instanceof DatabaseError && (error.code === DUPLICATE_DATABASE || error.code === UNIQUE_VIOLATION)) return 'existed';
    const user = server.user || 'the role of DATABASE_URL';
    const why =
      error instanceof DatabaseError && error.code === INSUFFICIENT_PRIVILEGE
        ? `${user} may not create databases`
        : `it could not be made (${error instanceof Error ? error.message : String(error)})`;
    throw new DatabaseMissingError(
      `the database "${name}" of DATABASE_URL does not exist and ${why}: make it (createdb ${name}, or CREATE DATABASE ${escapeIdentifier(name)} as a role allowed to) and start again`,
    );
  }
}

async function connected<T>(client: Client, work: (client: Client) => Promise<T>): Promise<T> {
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
