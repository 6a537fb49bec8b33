import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

const BINARY = 'redis-server';
/** A start that takes longer is hung: the server says it is ready within milliseconds, even on a loaded machine. */
const START_TIMEOUT_MS = 60_000;

/** Whether a `redis-server` binary is on the PATH (decided before any test is declared). */
export function hasRedisServer(): boolean {
  const probe = spawnSync(BINARY, ['--version'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

/** A port that was free a moment ago (the OS picks it; there is a small race, as always). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts a throwaway redis-server on a free loopback port (or `port`), without persistence (or,
 * with `appendOnlyDir`, writing every change to its append-only file there before answering, so
 * that one killed and started again on the same port and folder keeps everything), and resolves
 * once it says it is ready to accept connections (its append-only file loaded). `stop()` ends it
 * and waits for it to exit; `kill()` SIGKILLs it.
 */
export async function startRedisServer(
  options: { port?: number; appendOnlyDir?: string } = {},
): Promise<{ url: string; port: number; stop(): Promise<void>; kill(): Promise<void> }> {
  const port = options.port ?? (await freePort());
  const persistence = options.appendOnlyDir
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.appendOnlyDir]
    : ['--appendonly', 'no'];
  const args = ['--port', String(port), '--save', '', ...persistence, '--bind', '127.0.0.1'];
  const child = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let ready: () => void = () => undefined;
  let failed: (error: Error) => void = () => undefined;
  const started = new Promise<void>((resolve, reject) => ([ready, failed] = [resolve, reject]));
  const heard = (chunk: Buffer) => {
    output += chunk;
    if (output.includes('Ready to accept connections')) ready();
  };
  child.stdout?.on('data', heard);
  child.stderr?.on('data', heard);
  child.on('error', (error) => failed(error));
  child.once('exit', () => failed(new Error(output.trim())));
  // Should the test process end without stop() (a crash, a killed worker), take the server along.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);

  const stop = async () => {
    process.off('exit', orphanGuard);
    const gone = exited(child);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  };
  const kill = async () => {
    process.off('exit', orphanGuard);
    const gone = exited(child);
    child.kill('SIGKILL');
    await gone;
  };

  const hung = setTimeout(() => failed(new Error(`not ready within ${START_TIMEOUT_MS} ms: ${output.trim()}`)), START_TIMEOUT_MS);
  try {
    await started;
  } catch (error) {
    await stop();
    throw new Error(`redis-server did not start on port ${port}: ${(error as Error).message}`, { cause: error });
  } finally {
    clearTimeout(hung);
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop, kill };
}
