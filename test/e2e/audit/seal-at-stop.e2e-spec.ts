import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Client } from 'pg';
import { runCli } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { databaseOfItsOwn, processesPostgresUnavailableSync } from '../../support/private-postgres';
import { tempDir } from '../../support/temp-dir';
import { WorkerProcess } from '../../support/worker-process';

/** No sealing round runs while a test runs: whatever is sealed was sealed as a process stopped. */
const NO_ROUND = { SEAL_EVERY_MS: '3600000' };

interface Verification {
  code: number;
  stdout: string;
  result: { verified: boolean; passed: boolean; unsealed: number; events: number; sealerRunning: boolean; failure: unknown };
}

/** `audit:verify` read twice at once, as JSON and as text. */
async function verify(dataDir: string, options: string[] = [], env: Record<string, string> = {}): Promise<Verification> {
  const [json, text] = await Promise.all([
    runCli(dataDir, ['audit:verify', '--json', ...options], env),
    runCli(dataDir, ['audit:verify', ...options], env),
  ]);
  expect(text.code).toBe(json.code);
  return { code: json.code, stdout: text.stdout, result: JSON.parse(json.stdout) };
}

/**
 * A stop seals what was written: the API stopped (SIGTERM) seconds after its start, before any
 * sealing round, leaves every event sealed, so an edit by SQL afterwards is named; an operator's
 * command run while no service runs seals what it wrote. `audit:verify` counts what no checkpoint
 * covers and fails on it with --strict, and by default when no process that seals is running (a
 * service killed).
 */
describe('the history sealed as the service stops', () => {
  const dir = tempDir('seal-at-stop');
  afterAll(() => dir.remove());

  it('seals at a SIGTERM every event written, and audit:verify names a row edited and one removed after it', async () => {
    const partner = JSON.parse((await runCli(dir.path, ['partners:create', '--name', 'Stopped soon', '--json'])).stdout);
    // No service runs: the command sealed its own events.
    const afterCommand = await verify(dir.path);
    expect([afterCommand.code, afterCommand.result]).toEqual([
      0,
      expect.objectContaining({ passed: true, unsealed: 0, sealerRunning: false }),
    ]);
    expect(afterCommand.stdout).toContain('every event is sealed');

    const api = await ApiProcess.start(dir.path, await freePort(), NO_ROUND);
    const users: string[] = [];
    try {
      for (const email of ['first@example.com', 'second@example.com']) {
        const made = await api.call('POST', `/users?api_key=${partner.api_key}`, { email });
        expect(made.status).toBe(200);
        users.push(made.body.user_id);
      }
      // Running: its events wait for the next checkpoint, which the running service makes.
      const running = await verify(dir.path);
      expect([running.code, running.result]).toEqual([0, expect.objectContaining({ passed: true, sealerRunning: true })]);
      expect(running.result.unsealed).toBeGreaterThan(0);
      expect(running.stdout).toMatch(/\d+ events? not yet sealed: the running service seals them/);
      const strict = await verify(dir.path, ['--strict']);
      expect([strict.code, strict.result.passed]).toEqual([1, false]);
      expect(strict.stdout).toMatch(/NOT SEALED: \d+ events? not yet sealed \(--strict\)/);
    } finally {
      await api.stop();
    }
    expect(api.exitCode).toBe(0);

    const stopped = await verify(dir.path, ['--strict']);
    expect([stopped.code, stopped.result]).toEqual([0, expect.objectContaining({ verified: true, passed: true, unsealed: 0 })]);

    const db = new Database(join(dir.path, 'events.sqlite'));
    try {
      const row = db.prepare('SELECT * FROM events WHERE stream_id = ? AND revision = 0').get(`user-${users[1]}`) as Record<
        string,
        unknown
      >;
      db.prepare('UPDATE events SET data = json_set(data, ?, 1) WHERE position = ?').run('$.forged', row.position);
      const edited = await verify(dir.path);
      expect([edited.code, edited.result.failure]).toEqual([
        1,
        expect.objectContaining({ streamId: `user-${users[1]}`, revision: 0, problem: 'was changed: its content does not match its seal' }),
      ]);
      db.prepare('UPDATE events SET data = ? WHERE position = ?').run(row.data, row.position);
      expect((await verify(dir.path)).code).toBe(0);
      db.prepare('DELETE FROM events WHERE stream_id = ? AND revision = 0').run(`user-${users[0]}`);
      const removed = await verify(dir.path);
      expect([removed.code, removed.result.failure]).toEqual([
        1,
        expect.objectContaining({ streamId: `user-${users[0]}`, problem: expect.stringMatching(/^was removed/) }),
      ]);
    } finally {
      db.close();
    }
  }, 180_000);

  it('fails audit:verify by default on the events a killed service left unsealed, and seals them at the next graceful stop', async () => {
    const fresh = tempDir('seal-at-kill');
    try {
      const partner = JSON.parse((await runCli(fresh.path, ['partners:create', '--name', 'Killed', '--json'])).stdout);
      const port = await freePort();
      let api = await ApiProcess.start(fresh.path, port, NO_ROUND);
      expect((await api.call('POST', `/users?api_key=${partner.api_key}`, { email: 'killed@example.com' })).status).toBe(200);
      await api.kill();
      const killed = await verify(fresh.path);
      expect([killed.code, killed.result]).toEqual([1, expect.objectContaining({ verified: true, passed: false, sealerRunning: false })]);
      expect(killed.result.unsealed).toBeGreaterThan(0);
      expect(killed.stdout).toMatch(
        /NOT SEALED: \d+ events? not yet sealed, after the last checkpoint, and no process that seals is running/,
      );

      api = await ApiProcess.start(fresh.path, port, NO_ROUND);
      await api.stop();
      expect(api.exitCode).toBe(0);
      expect((await verify(fresh.path)).result).toMatchObject({ passed: true, unsealed: 0 });
    } finally {
      fresh.remove();
    }
  }, 180_000);
});

const unavailable = processesPostgresUnavailableSync();

if (unavailable) {
  describe.skip(`the history sealed as the worker stops, on PostgreSQL — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  /** Distributed: the worker seals; stopped (SIGTERM), it seals what was committed, and audit:verify knows whether one runs. */
  describe('the history sealed as the worker stops, on PostgreSQL', () => {
    const dir = tempDir('seal-at-stop-pg');
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => {
      database = await databaseOfItsOwn('seal_at_stop');
    }, 300_000);
    afterAll(async () => {
      await database?.drop();
      dir.remove();
    });

    it('seals at the worker’s SIGTERM what the API wrote, and audit:verify names a row edited after it', async () => {
      const env = { DATABASE_URL: database.url };
      // The partner made while the processes start.
      const [created, worker, api] = await Promise.all([
        runCli(dir.path, ['partners:create', '--name', 'Distributed', '--json'], env),
        WorkerProcess.start(dir.path, { ...env, ...NO_ROUND }),
        freePort().then((port) => ApiProcess.start(dir.path, port, env)),
      ]);
      const partner = JSON.parse(created.stdout);
      let userId: string;
      try {
        const made = await api.call('POST', `/users?api_key=${partner.api_key}`, { email: 'replica@example.com' });
        expect(made.status).toBe(200);
        userId = made.body.user_id;
        const running = await verify(dir.path, [], env);
        expect([running.code, running.result]).toEqual([0, expect.objectContaining({ passed: true, sealerRunning: true })]);
        expect(running.result.unsealed).toBeGreaterThan(0);
        await worker.stop();
        expect(worker.exitCode).toBe(0);
        const stopped = await verify(dir.path, ['--strict'], env);
        expect([stopped.code, stopped.result]).toEqual([0, expect.objectContaining({ passed: true, unsealed: 0, sealerRunning: false })]);
      } finally {
        await worker.kill();
        await api.stop();
      }
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        await admin.query(`UPDATE events SET data = jsonb_set(data, '{forged}', '1') WHERE stream_id = $1 AND revision = 0`, [
          `user-${userId}`,
        ]);
        const edited = await verify(dir.path, [], env);
        expect([edited.code, edited.result.failure]).toEqual([
          1,
          expect.objectContaining({ streamId: `user-${userId}`, problem: 'was changed: its content does not match its seal' }),
        ]);
      } finally {
        await admin.end();
      }
    }, 180_000);
  });
}
