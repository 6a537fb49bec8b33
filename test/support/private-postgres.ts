import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './api-process';
import { createTestDatabase, postgresUnavailableSync } from './postgres';

/** How long a starting server may take to accept connections before it is taken as hung. */
const START_CEILING_MS = 120_000;

/** Where Debian puts a PostgreSQL's programs (`/usr/lib/postgresql/<major>/bin`). */
function binaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const major = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  const bin = major && join(root, major, 'bin');
  return bin && existsSync(join(bin, 'initdb')) ? bin : null;
}

/** Why a PostgreSQL of a test's own cannot run here, or null when it can. */
export function privatePostgresUnavailable(): string | null {
  if (!binaries()) return 'no PostgreSQL server programs under /usr/lib/postgresql';
  if (process.getuid?.() === 0 && spawnSync('id', ['postgres']).status !== 0) return 'run as root, and no postgres user to run it as';
  return null;
}

/**
 * A PostgreSQL cluster of the test's own (initdb into a temporary folder, run on a free port, as
 * the postgres user when the test runs as root, which PostgreSQL refuses to run as; its programs
 * started directly, so that signals reach the server), so that a test can stop it, crash it and
 * start it again without touching the machine's server, and its processes have 200 connections of
 * their own. The data survive a stop or a crash (`stop('immediate')` is one: no shutdown
 * checkpoint, recovery at the next start).
 */
export class PrivatePostgres {
  private server: ChildProcess | null = null;
  /** Should the test process end without `remove()` (a crash, a killed jest worker), the server goes with it. */
  private readonly orphanGuard = () => this.server?.kill('SIGQUIT');

  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const bin = binaries();
    if (!bin) throw new Error('no PostgreSQL server programs');
    const dir = mkdtempSync(join(tmpdir(), 'private-pg-'));
    chmodSync(dir, 0o700);
    const ids = runAs();
    if (ids) chownSync(dir, ids.uid, ids.gid);
    // Not synced to disk: the files outlive a crash of the server (the tests' crashes), not of the machine.
    const init = spawnSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'], {
      encoding: 'utf8',
      cwd: tmpdir(),
      ...ids,
    });
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    const server = new PrivatePostgres(bin, dir, await freePort());
    process.once('exit', server.orphanGuard);
    await server.up();
    return server;
  }

  get url(): string {
    return this.urlOf('postgres');
  }

  /** The URL of one of its databases. */
  urlOf(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server (after a stop or a crash) and waits until it says it accepts connections. */
  async up(): Promise<void> {
    if (this.server) return;
    const server = spawn(
      join(this.bin, 'postgres'),
      [
        '-D',
        join(this.dir, 'data'),
        '-p',
        String(this.port),
        '-k',
        this.dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'max_connections=200',
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        // Its log read in English (below), whatever the machine's locale.
        '-c',
        'lc_messages=C',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], cwd: tmpdir(), ...runAs() },
    );
    this.server = server;
    server.once('exit', () => {
      if (this.server === server) this.server = null;
    });
    // Its log (on stderr) says when it accepts connections, after a crash's recovery too.
    let log = '';
    await new Promise<void>((ready, failed) => {
      const timer = setTimeout(() => failed(new Error(`the private PostgreSQL did not start:\n${log.slice(-2000)}`)), START_CEILING_MS);
      const end = (error?: Error) => {
        clearTimeout(timer);
        server.stderr!.off('data', read);
        server.off('exit', exited);
        if (error) failed(error);
        else ready();
      };
      const read = (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('database system is ready to accept connections')) end();
      };
      const exited = () => end(new Error(`the private PostgreSQL exited as it started:\n${log.slice(-2000)}`));
      server.stderr!.on('data', read);
      server.once('exit', exited);
    });
    // Read and dropped from now on, so that the server never blocks on a full pipe.
    server.stderr!.resume();
  }

  /**
   * Stops the server: `fast` (clients disconnected, a shutdown checkpoint) or `immediate` (the
   * processes quit at once as in a crash; the next start recovers from the WAL).
   */
  async stop(mode: 'fast' | 'immediate'): Promise<void> {
    const server = this.server;
    if (!server) return;
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    server.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    await exited;
    this.server = null;
  }

  /** Stops it for good and removes its files. */
  async remove(): Promise<void> {
    await this.stop('immediate');
    process.off('exit', this.orphanGuard);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The postgres user's ids when the test runs as root (PostgreSQL will not run as root); else none. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Why a suite that starts several service processes on PostgreSQL cannot run here (see
 * {@link databaseOfItsOwn}), or null.
 */
export function processesPostgresUnavailableSync(): string | null {
  return privatePostgresUnavailable() === null ? null : postgresUnavailableSync();
}

/**
 * A database for a suite that starts several service processes on PostgreSQL (API replicas,
 * workers, CLI commands: up to ~50 connections together), and `drop` to remove it: on a cluster of
 * the suite's own (200 connections) where PostgreSQL's programs are installed, so that such suites
 * run side by side and beside the suites on the machine's server without passing its
 * max_connections; else a database of its own on that server (`POSTGRES_TEST_URL`).
 */
export async function databaseOfItsOwn(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (privatePostgresUnavailable() !== null) return createTestDatabase(label);
  const server = await PrivatePostgres.start();
  try {
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE deals_${label}`);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await server.remove();
    throw error;
  }
  return { url: server.urlOf(`deals_${label}`), drop: () => server.remove() };
}
