import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { insecureHttps } from './insecure-https';
import { ResponseCheck } from './response-check';
import { UNLIMITED } from './unlimited';
import { compiledEntry } from './compiled-service';

const ROOT = join(__dirname, '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** The API as its own process (its sources, compiled once: compiled-service.ts) on a data folder: killable like a real one. */
export class ApiProcess {
  private check?: ResponseCheck;
  private output = '';
  private readonly closed: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
  }

  /** `captureStdout`: keep what the process writes on stdout (see `stdout()`); otherwise it is dropped. */
  static async start(
    dataDir: string,
    port: number,
    env: Record<string, string> = {},
    { captureStdout = false }: { captureStdout?: boolean } = {},
  ): Promise<ApiProcess> {
    const child = spawn(process.execPath, [compiledEntry('apps/api/src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        DEMO_DATA: 'off',
        LOG_LEVEL: 'warn',
        ...UNLIMITED,
        ...env,
      },
      stdio: ['ignore', captureStdout ? 'pipe' : 'ignore', 'ignore'],
    });
    const api = new ApiProcess(child, port);
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        if ((await api.call('GET', '/health')).status === 200) return api;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null || Date.now() > deadline) throw new Error('the API process did not start');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    return this.callWithHeaders(method, path, body, {});
  }

  /** A call with headers of its own (an `Authorization` for the v3 calls). */
  async callWithHeaders(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Record<string, string | string[] | undefined> }> {
    const reply = await request(`https://127.0.0.1:${this.port}${path}`, {
      method: method as never,
      dispatcher: insecureHttps,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await reply.body.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (path !== '/api-docs.json') {
      // Every answer is checked against the description this process serves (read once).
      this.check ??= new ResponseCheck((await this.call('GET', '/api-docs.json')).body);
      this.check.check(method, path, reply.statusCode, parsed, String(reply.headers['content-type'] ?? ''));
    }
    return { status: reply.statusCode, body: parsed, headers: reply.headers };
  }

  /** A GET answered in another media type than JSON (a CSV): its text, and its status and type checked. */
  async text(path: string): Promise<string> {
    const reply = await request(`https://127.0.0.1:${this.port}${path}`, { dispatcher: insecureHttps });
    const text = await reply.body.text();
    this.check ??= new ResponseCheck((await this.call('GET', '/api-docs.json')).body);
    this.check.check('GET', path, reply.statusCode, undefined, String(reply.headers['content-type'] ?? ''));
    return text;
  }

  /**
   * A GET's status, its body read and dropped: what a client waiting for the answer sees, without
   * the checks `call` makes of it (for timing the answer alone).
   */
  async status(path: string): Promise<number> {
    const reply = await request(`https://127.0.0.1:${this.port}${path}`, { dispatcher: insecureHttps });
    await reply.body.arrayBuffer();
    return reply.statusCode;
  }

  /** Waits until its views hold everything in the log (`GET /health/ready` answers 200). */
  async ready(deadlineMs = 60_000): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    while ((await this.status('/health/ready')) !== 200) {
      if (Date.now() > deadline) throw new Error(`the API's views did not catch up within ${deadlineMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The process id (to read what it holds under /proc). */
  get pid(): number {
    return this.child.pid!;
  }

  /** The exit code once it has exited (null while it runs, or when a signal ended it). */
  get exitCode(): number | null {
    return this.child.exitCode;
  }

  /** SIGKILL: no shutdown hook runs, nothing is flushed that was not already durable. */
  kill(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      // A process ended by a signal has a signalCode and no exitCode.
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }

  /** Everything the process wrote on stdout, once it has exited and its output is closed. */
  async stdout(): Promise<string> {
    await this.closed;
    return this.output;
  }
}
