/**
 * A minimal HTTPS webhook receiver for benches: answers every request 200 with an empty body as
 * soon as the request's body has arrived, and keeps only counts (per path: requests, distinct
 * `webhook-id`s, the times of the first and latest arrival) and its connections. Its certificate is
 * made by {@link sinkCertificate} (self-signed, its own CA, for this machine), so that the process
 * sending to it can trust it through `NODE_EXTRA_CA_CERTS`, as a deployment trusts a private CA.
 * It runs in a process of its own ({@link startSinkProcess}; `webhook-sink-child.ts`), as a
 * receiver runs elsewhere than the service: its TLS and parsing are not charged to the API's
 * event loop. (`test/support/webhook-receiver.ts` keeps every request and answers by rule; benches
 * import nothing from `test/`.)
 */
import { fork } from 'node:child_process';
import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalCaCertificate, localCaCertificate } from './local-ca-certificate';

/** The sink's certificate: see {@link localCaCertificate}. */
export const sinkCertificate = (): Promise<LocalCaCertificate> => localCaCertificate('bench webhook sink');

/** What arrived at one path. */
export interface PathTally {
  requests: number;
  /** Distinct `webhook-id` headers: fewer than {@link requests} means some were sent twice. */
  ids: Set<string>;
  /** `performance.now()` of the first and the latest arrival (the request's body received). */
  firstAt: number;
  lastAt: number;
  /** Requests without the three Standard Webhooks headers. */
  unsigned: number;
}

export class WebhookSink {
  private readonly tallies = new Map<string, PathTally>();
  /** TLS connections accepted, open now, and open at most at once. */
  readonly connections = { accepted: 0, open: 0, peak: 0 };

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(certificate: LocalCaCertificate): Promise<WebhookSink> {
    const holder: { sink?: WebhookSink } = {};
    const server = createServer({ cert: certificate.cert, key: certificate.key, keepAliveTimeout: 5_000 }, (req, res) => {
      req.on('data', () => undefined);
      req.on('end', () => {
        holder.sink!.count(req.url ?? '', req.headers);
        res.writeHead(200, { 'content-length': '0' });
        res.end();
      });
    });
    server.on('clientError', (_error, socket) => socket.destroy());
    server.on('secureConnection', (socket) => {
      const c = holder.sink!.connections;
      c.accepted += 1;
      c.open += 1;
      c.peak = Math.max(c.peak, c.open);
      socket.once('close', () => (c.open -= 1));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.sink = new WebhookSink(server, (server.address() as AddressInfo).port);
    return holder.sink;
  }

  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  /** What arrived at `path` so far (an empty tally when nothing did). */
  tally(path: string): PathTally {
    return this.tallies.get(path) ?? { requests: 0, ids: new Set(), firstAt: Number.NaN, lastAt: Number.NaN, unsigned: 0 };
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private count(path: string, headers: Record<string, string | string[] | undefined>): void {
    const now = performance.now();
    let tally = this.tallies.get(path);
    if (!tally) {
      tally = { requests: 0, ids: new Set(), firstAt: now, lastAt: now, unsigned: 0 };
      this.tallies.set(path, tally);
    }
    tally.requests += 1;
    tally.lastAt = now;
    const id = headers['webhook-id'];
    if (typeof id === 'string') tally.ids.add(id);
    if (!id || !headers['webhook-timestamp'] || !headers['webhook-signature']) tally.unsigned += 1;
  }
}

/** A tally as it crosses to the bench process: the distinct ids counted, times in the sink process's `performance.now()`. */
export interface SinkTally {
  requests: number;
  distinct: number;
  firstAt: number;
  lastAt: number;
  unsigned: number;
}

export interface SinkConnections {
  accepted: number;
  open: number;
  peak: number;
}

/** The bench's handle on the sink's process. */
export interface SinkProcess {
  port: number;
  url(path: string): string;
  tally(path: string): Promise<SinkTally>;
  connections(): Promise<SinkConnections>;
  /** CPU the sink's process used since it started, in µs (user + system). */
  cpuMicros(): Promise<number>;
  /** Resolves once `count` requests have arrived at `path` (asked every 50 ms); rejects after `timeoutMs`. */
  waitFor(path: string, count: number, timeoutMs: number): Promise<SinkTally>;
  close(): Promise<void>;
}

export type SinkQuestion = { ask: 'tally'; path: string } | { ask: 'connections' | 'cpu' };
export type SinkRequest = SinkQuestion & { id: number };

/** Starts the sink in a child process (`webhook-sink-child.js`) with `certificate`. */
export async function startSinkProcess(certificate: LocalCaCertificate): Promise<SinkProcess> {
  const child = fork(join(__dirname, 'webhook-sink-child.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the webhook sink exited (code ${code}) before listening`)));
    child.once('message', (message) => resolve((message as { port: number }).port));
    child.send(certificate);
  });
  child.removeAllListeners('exit');
  child.on('message', (message) => {
    const { id, value } = message as { id: number; value: unknown };
    pending.get(id)?.(value);
    pending.delete(id);
  });
  const ask = <T>(request: SinkQuestion) =>
    new Promise<T>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve as (value: unknown) => void);
      child.send({ ...request, id });
    });
  const tally = (path: string) => ask<SinkTally>({ ask: 'tally', path });
  return {
    port,
    url: (path) => `https://127.0.0.1:${port}${path}`,
    tally,
    connections: () => ask<SinkConnections>({ ask: 'connections' }),
    cpuMicros: () => ask<number>({ ask: 'cpu' }),
    async waitFor(path, count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const now = await tally(path);
        if (now.requests >= count) return now;
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${count} requests at ${path}; ${now.requests} came`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
