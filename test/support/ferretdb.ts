import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';

const SCRIPT = join(__dirname, '..', '..', 'scripts', 'ferretdb.sh');
/** A build that takes longer is hung: from nothing (the module download too) it takes 1-2 minutes on 2 cores. */
const BUILD_CEILING_MS = 15 * 60_000;
/** A start that takes longer is hung: FerretDB listens within a second, even on a loaded machine. */
const START_CEILING_MS = 60_000;
/** How long it may take to stop once told to before it is killed. */
const STOP_CEILING_MS = 10_000;

let built: { binary: string } | { skipped: string } | undefined;

/**
 * Why FerretDB cannot run here, or null. Decided as suites are declared, building it the first time
 * (`scripts/ferretdb.sh build`: once per version, cached; the other workers wait for that build).
 * Without Go the script says so, which is the reason; a build that fails throws, failing the suite.
 */
export function ferretdbUnavailable(): string | null {
  if (!built) {
    const run = spawnSync('bash', [SCRIPT, 'build'], { encoding: 'utf8', timeout: BUILD_CEILING_MS });
    if (run.status === 3) built = { skipped: run.stdout.trim() };
    else if (run.status === 0) built = { binary: run.stdout.trim() };
    else throw new Error(`scripts/ferretdb.sh build failed (status ${run.status ?? run.signal}):\n${run.stderr.slice(-4000)}`);
  }
  return 'skipped' in built ? built.skipped : null;
}

export interface FerretDB {
  /** `mongodb://127.0.0.1:<port>/` */
  url: string;
  /** Stops it, removing the temporary folder of its SQLite backend. */
  stop(): Promise<void>;
}

/**
 * A FerretDB of the caller's own (`scripts/ferretdb.sh start`): on a free loopback port, on SQLite in
 * a temporary folder, or on `postgresql` (a database URL). Resolves once the driver's ping is answered.
 */
export async function startFerretDB(backend: { postgresql?: string } = {}): Promise<FerretDB> {
  const args = backend.postgresql ? ['--postgresql', backend.postgresql] : [];
  // A process group of its own (the script and FerretDB), so that an orphan guard's kill reaches both.
  const child = spawn('bash', [SCRIPT, 'start', ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => void (log = (log + chunk.toString()).slice(-8000)));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  // Should the test process end without stop() (a crash, a killed jest worker), FerretDB goes with it.
  process.once('exit', killGroup);
  const stop = async () => {
    process.off('exit', killGroup);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const hung = setTimeout(killGroup, STOP_CEILING_MS);
    await closed;
    clearTimeout(hung);
  };

  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no MONGO_URL within ${START_CEILING_MS} ms`)), START_CEILING_MS);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const printed = /^MONGO_URL=(\S+)$/m.exec(out);
        if (!printed) return;
        clearTimeout(timer);
        resolve(printed[1]);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the script exited as it started (${code ?? signal})`));
      });
    });
    // Read and dropped from now on, so that the script never blocks on a full pipe.
    child.stdout.resume();
    // Ready once it answers the driver, which waits for it (server selection) rather than a set delay.
    const client = new MongoClient(url, { serverSelectionTimeoutMS: START_CEILING_MS });
    try {
      await client.db('admin').command({ ping: 1 });
    } finally {
      await client.close();
    }
    return { url, stop };
  } catch (error) {
    await stop();
    throw new Error(`FerretDB did not start: ${(error as Error).message}\n${log}`, { cause: error });
  }
}
