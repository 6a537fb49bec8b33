import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

const BINARY = 'redis-server';
const START_TIMEOUT_MS = 10_000;

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

/** One PING over a raw socket: true when the server answers PONG. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.on('error', () => finish(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => finish(chunk.toString().startsWith('+PONG')));
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
 * once it answers PING. `stop()` ends it and waits for it to exit; `kill()` SIGKILLs it.
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
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  let failure: Error | undefined;
  child.on('error', (error) => (failure = error));
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

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await answersPing(port))) {
    const exitedEarly = child.exitCode !== null || child.signalCode !== null;
    if (failure || exitedEarly || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not start on port ${port}: ${failure?.message ?? output.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop, kill };
}
