import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './api-process';

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
  if (process.getuid?.() !== 0) return 'a server of its own is run as the postgres user, which needs root';
  if (spawnSync('id', ['postgres']).status !== 0) return 'no postgres user';
  return null;
}

/**
 * A PostgreSQL cluster of the test's own (initdb into a temporary folder, run as the postgres
 * user on a free port; its programs started directly, so that signals reach the server), so that a test can stop it, crash it and start it again without touching
 * the machine's server. The data survive a stop or a crash (`stop('immediate')` is one: no
 * shutdown checkpoint, recovery at the next start).
 */
export class PrivatePostgres {
  private server: ChildProcess | null = null;

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
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
    const init = spawnSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres'], {
      encoding: 'utf8',
      cwd: tmpdir(),
      uid,
      gid,
    });
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    const server = new PrivatePostgres(bin, dir, await freePort());
    await server.up();
    return server;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts the server (after a stop or a crash) and waits until it accepts connections. */
  async up(): Promise<void> {
    if (this.server) return;
    const { uid, gid } = postgresIds();
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
      ],
      { stdio: 'ignore', cwd: tmpdir(), uid, gid },
    );
    this.server = server;
    server.once('exit', () => {
      if (this.server === server) this.server = null;
    });
    for (let i = 0; ; i++) {
      const client = new Client({ connectionString: this.url });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
        if (i > 300 || this.server === null) throw new Error('the private PostgreSQL did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
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
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}
