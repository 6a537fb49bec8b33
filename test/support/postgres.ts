import { Client } from 'pg';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';

/** The server the PostgreSQL suites use: `POSTGRES_TEST_URL`, else the machine's own (trust auth). */
export const POSTGRES_ADMIN_URL = process.env.POSTGRES_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Why the PostgreSQL suites cannot run here, or null when the server answers. */
export async function postgresUnavailable(): Promise<string | null> {
  const client = new Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `no PostgreSQL answers at ${POSTGRES_ADMIN_URL} (${(error as Error).message}); set POSTGRES_TEST_URL`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The same question answered synchronously (a child process tries to connect), for a suite that
 * must choose between `describe` and `describe.skip` when its file is loaded.
 */
export function postgresUnavailableSync(): string | null {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      `const { Client } = require('pg'); const c = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 }); c.connect().then(() => c.query('SELECT 1')).then(() => process.exit(0), (e) => { console.error(e.message); process.exit(1); });`,
      POSTGRES_ADMIN_URL,
    ],
    { encoding: 'utf8', timeout: 10_000, cwd: __dirname },
  );
  return probe.status === 0
    ? null
    : `no PostgreSQL answers at ${POSTGRES_ADMIN_URL} (${(probe.stderr || 'no answer').trim()}); set POSTGRES_TEST_URL`;
}

/** `work` on a connection of the test server's administrator, closed after it. */
export async function asAdmin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A database of its own for a test run: its URL, and `drop` to remove it (connections closed first). */
export async function createTestDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `deals_${label}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
