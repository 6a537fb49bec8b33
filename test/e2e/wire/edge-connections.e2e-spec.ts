import { readdirSync, readlinkSync } from 'node:fs';
import { connect as netConnect, Socket } from 'node:net';
import { connect as tlsConnect, TLSSocket } from 'node:tls';
import { ApiProcess, freePort } from '../../support/api-process';
import { tempDir } from '../../support/temp-dir';

const PLAIN = 2_000;
const PLAIN_AT_ONCE = 100;
const SILENT = 300;
/**
 * How long a wait may take before it counts as hung: far past the timers it waits on (a handshake
 * deadline of 1 s), short of those that would otherwise end it (set to two minutes here).
 */
const HUNG_MS = 30_000;
/** The grace and handshake deadline that only a fault would wait out. */
const NEVER_MS = '120000';

/** Files the process holds open, and how many of them are sockets. */
function openFiles(pid: number): { files: number; sockets: number } {
  const fds = readdirSync(`/proc/${pid}/fd`);
  const sockets = fds.filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false; // closed meanwhile
    }
  }).length;
  return { files: fds.length, sockets };
}

/** The process's open files once their number has held still for 1.5 s (at most 15 s of waiting). */
async function settledFiles(pid: number): Promise<{ files: number; sockets: number }> {
  let last = openFiles(pid);
  let stillSince = Date.now();
  for (const started = Date.now(); Date.now() - started < 15_000 && Date.now() - stillSince < 1_500;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = openFiles(pid);
    if (now.files !== last.files) [last, stillSince] = [now, Date.now()];
  }
  return last;
}

/** Polls until `test` holds, or throws after `withinMs`; how long it took. */
async function within(withinMs: number, test: () => boolean | Promise<boolean>, what: () => string): Promise<number> {
  const started = Date.now();
  while (!(await test())) {
    if (Date.now() - started > withinMs) throw new Error(`${what()}: not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

/** A plain-HTTP GET: the answer the server sends before it ends the connection (this side then closes too). */
function plainGet(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    let answer = '';
    socket.setEncoding('latin1');
    socket.setTimeout(HUNG_MS, () => socket.destroy(new Error(`no answer within ${HUNG_MS} ms`)));
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** `count` calls of `call`, at most `atOnce` at a time. */
async function bounded<T>(count: number, atOnce: number, call: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (next < count) {
        next++;
        results.push(await call());
      }
    }),
  );
  return results;
}

/** A connection that sends nothing: resolves with how long until the server closed it. */
function silent(port: number): { socket: Socket; closed: Promise<number> } {
  const started = Date.now();
  const socket = netConnect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
  return { socket, closed };
}

/** Stops the process with SIGTERM; how long it took to exit. */
async function stopTimed(api: ApiProcess): Promise<number> {
  const started = Date.now();
  await api.stop();
  return Date.now() - started;
}

/**
 * The edge no client can wear down: refused plain-HTTP connections and silent ones are closed,
 * the process's open files come back to where they were, HTTPS keeps answering through it, and a
 * stop right after is as quick as on an idle process.
 */
describe('connections the service refuses or finishes are closed (a real API process)', () => {
  const dir = tempDir('edge');
  afterAll(() => dir.remove());

  it('closes 2,000 refused plain-HTTP connections and 300 silent ones, serves HTTPS meanwhile, and stops at once after', async () => {
    const port = await freePort();
    // A stop that waited for the flood's connections would wait out its grace.
    const api = await ApiProcess.start(dir.path, port, { HANDSHAKE_TIMEOUT_MS: '1000', SHUTDOWN_GRACE_MS: NEVER_MS });
    let stopMs: number;
    try {
      // Warmed up: the views' files a health check opens are open before counting, and the files the
      // start's own work opens (views, usage, jobs) are open too: counted once their number holds for 1.5 s.
      for (let i = 0; i < 5; i++) expect(await api.status('/health')).toBe(200);
      const before = await settledFiles(api.pid);
      let peak = before;

      const silents = Array.from({ length: SILENT }, () => silent(port));
      let flooding = true;
      const flood = bounded(PLAIN, PLAIN_AT_ONCE, () => plainGet(port)).finally(() => (flooding = false));
      // HTTPS answers while the flood is under way.
      const healthy: number[] = [];
      while (flooding || healthy.length === 0) {
        const now = openFiles(api.pid);
        if (now.sockets > peak.sockets) peak = now;
        healthy.push(await api.status('/health'));
        await new Promise((r) => setTimeout(r, 100));
      }
      const answers = await flood;
      expect(answers).toHaveLength(PLAIN);
      expect(answers.every((a) => a.startsWith('HTTP/1.1 403 Forbidden') && a.includes('"error_type":"https_required"'))).toBe(true);
      expect(healthy.every((s) => s === 200)).toBe(true);
      // The silent connections were closed by the server, after its handshake timeout.
      const silentMs = await Promise.all(silents.map((s) => s.closed));
      expect(Math.min(...silentMs)).toBeGreaterThanOrEqual(900);
      expect(Math.max(...silentMs)).toBeLessThan(HUNG_MS);

      // Every socket the flood opened is closed (the harness's own pooled HTTPS connection may come
      // and go). Other files may differ by a few: the views open a reader's files on first use.
      let after = before;
      const settledMs = await within(
        HUNG_MS,
        () => {
          after = openFiles(api.pid);
          return after.sockets <= before.sockets + 1 && after.files - after.sockets <= before.files - before.sockets + 16;
        },
        () => `open files (sockets) back to where they were, ${before.files} (${before.sockets}), from ${after.files} (${after.sockets})`,
      );
      process.stdout.write(
        `open files (sockets) before ${before.files} (${before.sockets}), at most ${peak.files} (${peak.sockets}) in the flood, ${after.files} (${after.sockets}) ${settledMs} ms after it; HTTPS calls during the flood: ${healthy.length}\n`,
      );
    } finally {
      stopMs = await stopTimed(api);
    }
    // As quick as a stop of an idle process (the other test's), far under SHUTDOWN_GRACE_MS.
    process.stdout.write(`SIGTERM right after the flood: exited in ${stopMs} ms\n`);
    expect(stopMs).toBeLessThan(HUNG_MS);
    expect(api.exitCode).toBe(0);
  }, 60_000);

  it('refuses connections past MAX_CONNECTIONS at once, and serves again once they are gone', async () => {
    const port = await freePort();
    const cap = 20;
    // Only the cap can close a connection before the handshake deadline.
    const api = await ApiProcess.start(dir.path, port, { MAX_CONNECTIONS: String(cap), HANDSHAKE_TIMEOUT_MS: NEVER_MS });
    const held: TLSSocket[] = [];
    try {
      let refused = 0;
      for (let i = 0; i < cap + 5; i++) {
        const started = Date.now();
        const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
        socket.on('error', () => undefined);
        const outcome = await new Promise<'secure' | 'closed'>((resolve) => {
          socket.once('secureConnect', () => resolve('secure'));
          socket.once('close', () => resolve('closed'));
        });
        if (outcome === 'secure') held.push(socket);
        else {
          refused++;
          expect(Date.now() - started).toBeLessThan(HUNG_MS);
        }
      }
      // The harness's own pooled HTTPS connection may hold a place too.
      expect(held.length).toBeGreaterThanOrEqual(cap - 2);
      expect(held.length).toBeLessThanOrEqual(cap);
      expect(refused).toBe(cap + 5 - held.length);
      for (const socket of held.splice(0)) socket.destroy();
      await within(
        HUNG_MS,
        async () => (await api.status('/health').catch(() => 0)) === 200,
        () => 'HTTPS served again',
      );
    } finally {
      for (const socket of held) socket.destroy();
      process.stdout.write(`SIGTERM on an idle process: exited in ${await stopTimed(api)} ms\n`);
    }
  }, 60_000);
});
