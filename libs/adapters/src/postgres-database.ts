import { Client, DatabaseError, escapeIdentifier } from 'pg';
import { sessionClient } from './postgres-pool';

/** A start that cannot go on, told in one line an operator can act on (no stack). */
export class DatabaseMissingError extends Error {}

/** SQLSTATEs: the database named does not exist; made meanwhile by another process (two ways); not allowed. */
const INVALID_CATALOG_NAME = '3D000';
const DUPLICATE_DATABASE = '42P04';
const INSUFFICIENT_PRIVILEGE = '42501';
const UNIQUE_VIOLATION = '23505';

/**
 * Makes the database `url` names when the server says it does not exist, from the server's
 * `postgres` database, so that a first start needs no `createdb`. Two processes starting together
 * may both try: the one that loses finds it made. A role that may not make databases stops the
 * start with a message saying what to run. Any other failure (the server away, a refused password)
 * is left to the adapters, which meet it as they would at any time.
 */
export async function ensurePostgresDatabase(url: string): Promise<'existed' | 'created' | 'unanswered'> {
  const name = databaseName(url);
  try {
    await connected(url, async () => undefined);
    return 'existed';
  } catch (error) {
    if (!(error instanceof DatabaseError) || error.code !== INVALID_CATALOG_NAME) return 'unanswered';
  }
  const server = new URL(url);
  server.pathname = '/postgres';
  try {
    await connected(server.toString(), (client) => client.query(`CREATE DATABASE ${escapeIdentifier(name)}`));
    return 'created';
  } catch (error) {
    // Made meanwhile by another process: refused as a duplicate, or as a unique violation of the
    // catalogue when both statements ran at once.
    if (error instanceof DatabaseError && (error.code === DUPLICATE_DATABASE || error.code === UNIQUE_VIOLATION)) return 'existed';
    const user = decodeURIComponent(server.username) || 'the role of DATABASE_URL';
    const why =
      error instanceof DatabaseError && error.code === INSUFFICIENT_PRIVILEGE
        ? `${user} may not create databases`
        : `it could not be made (${error instanceof Error ? error.message : String(error)})`;
    throw new DatabaseMissingError(
      `the database "${name}" of DATABASE_URL does not exist and ${why}: make it (createdb ${name}, or CREATE DATABASE ${escapeIdentifier(name)} as a role allowed to) and start again`,
    );
  }
}

/** The database a connection string names (its path), or the user's name as libpq does without one. */
function databaseName(url: string): string {
  const parsed = new URL(url);
  return decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username) || 'postgres';
}

async function connected<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = sessionClient(url);
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
