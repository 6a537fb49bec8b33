import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { freePort } from '../support/api-process';
import { fencedBlocks } from '../support/doc-blocks';
import { asAdmin, POSTGRES_ADMIN_URL, postgresUnavailableSync } from '../support/postgres';
import { hasRedisServer, startRedisServer } from '../support/redis-server';
import { tempDir } from '../support/temp-dir';

const REPOSITORY = join(__dirname, '..', '..');
const DOC = join(REPOSITORY, 'docs', 'distributed-mode.md');
const SECTION = '## On PostgreSQL, without Docker';

const why = postgresUnavailableSync() ?? (hasRedisServer() ? null : 'no redis-server on the PATH');

if (why !== null) {
  describe.skip(`docs/distributed-mode.md "${SECTION}" run as written — skipped: ${why}`, () => {
    it('needs PostgreSQL and redis-server', () => undefined);
  });
} else {
  /**
   * The section's shell blocks, run as an operator pastes them: one after the other in one bash, in
   * the checkout, on the machine's PostgreSQL (a database of the run's own, which the service makes
   * at its first start) and a Redis of the test's own. Every command must succeed (`set -e`, curl
   * with `--fail`), and the processes the blocks start must have stopped by the end.
   */
  describe(`docs/distributed-mode.md "${SECTION}" run as written`, () => {
    jest.setTimeout(10 * 60_000);
    const folder = tempDir('docs-postgres');
    const database = `deals_docs_${Date.now().toString(36)}`;
    let redis: Awaited<ReturnType<typeof startRedisServer>>;

    beforeAll(async () => {
      redis = await startRedisServer();
    });

    afterAll(async () => {
      await redis?.stop();
      await asAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
      folder.remove();
      for (const file of ['worker.log', 'api-1.log', 'api-2.log']) rmSync(join(REPOSITORY, file), { force: true });
    });

    it('starts a worker and two replicas on a database it makes, serves across them, and stops cleanly', async () => {
      const blocks = fencedBlocks(DOC, SECTION, 'sh');
      expect(blocks.length).toBeGreaterThanOrEqual(4);
      const url = new URL(POSTGRES_ADMIN_URL);
      url.pathname = `/${database}`;
      const env = {
        ...process.env,
        DATABASE_URL: url.toString(),
        REDIS_URL: redis.url,
        DATA_DIR: join(folder.path, 'data'),
        PORT: String(await freePort()),
      };
      const script = ['set -euo pipefail', `cd ${JSON.stringify(REPOSITORY)}`, ...blocks].join('\n');
      const ran = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn('bash', ['-c', script], { env, cwd: folder.path, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        child.on('exit', (code) => {
          // Whatever the blocks started and did not stop (a failure midway) goes with them.
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // the group is gone: every process stopped
          }
          resolve({ code, output });
        });
      });
      if (ran.code !== 0) throw new Error(`the section's blocks failed (${ran.code}):\n${ran.output.slice(-6000)}`);
      // The database was made by the service, which said so in its log, and holds the log the walkthrough wrote.
      // The blocks run in the checkout, as an operator's would: their logs are written there.
      const files = ['worker.log', 'api-1.log', 'api-2.log'].map((file) => join(REPOSITORY, file));
      const logs = files.map((file) => readFileSync(file, 'utf8')).join('\n');
      expect(logs).toContain('the database of DATABASE_URL did not exist: made it');
      const log = new Client({ connectionString: url.toString() });
      await log.connect();
      const events = Number((await log.query('SELECT count(*) AS n FROM events')).rows[0].n);
      await log.end();
      expect(events).toBeGreaterThan(300);
      // What a clean stop leaves in Redis is what the section says: BullMQ's queue under the prefix, budgets.
      const client = new Redis(redis.url);
      try {
        const keys = await client.keys('*');
        process.stdout.write(`Redis after the clean stop: ${keys.sort().join(', ')}\n`);
        expect(keys.filter((key) => !/^deals:(scheduled-jobs|rl):/.test(key))).toEqual([]);
        expect(keys).toEqual(expect.arrayContaining(['deals:scheduled-jobs:meta', 'deals:scheduled-jobs:release-due-holds']));
      } finally {
        client.disconnect();
      }
    });
  });
}
