import { writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { localCaCertificate } from '../../bench/support/local-ca-certificate';
import { tempDir } from './temp-dir';

/** One request as the receiver got it. */
export interface ReceivedWebhook {
  method: string;
  /** Path and query, e.g. `/partners/p1`. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** The raw body as UTF-8: what the signature covers. */
  body: string;
  receivedAt: Date;
  /** 0 for the first request the receiver got, 1 for the next, across all paths. */
  index: number;
}

/** How to answer one request. */
export interface WebhookAnswer {
  status: number;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Wait this long before answering (the status line included). */
  delayMs?: number;
}

export type AnswerRule = (request: ReceivedWebhook) => WebhookAnswer;

interface Waiter {
  count: number;
  matches: (request: ReceivedWebhook) => boolean;
  done: () => void;
  fail: (error: Error) => void;
}

/**
 * A real HTTPS server on a free port of 127.0.0.1, for webhook tests. Its certificate is
 * self-signed for localhost, 127.0.0.1 and ::1, and written to `caFile` so a child process can
 * trust it through `NODE_EXTRA_CA_CERTS`. It keeps every request and answers each by `answer`'s
 * rule (200 until told otherwise).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** TLS connections accepted, to tell connections kept open from one per request. */
  connections = 0;
  private rule: AnswerRule = () => ({ status: 200 });
  private readonly waiters = new Set<Waiter>();
  private readonly delays = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    /** The certificate (its own CA), in PEM. */
    readonly ca: string,
    /** A file holding `ca`, for `NODE_EXTRA_CA_CERTS`. */
    readonly caFile: string,
    private readonly folder: { remove: () => void },
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const pems = await localCaCertificate('localhost');
    const folder = tempDir('webhook-receiver');
    const caFile = join(folder.path, 'receiver-ca.pem');
    writeFileSync(caFile, pems.cert);
    const holder: { receiver?: WebhookReceiver } = {};
    const server = createServer({ key: pems.key, cert: pems.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => holder.receiver!.answer(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks), res));
    });
    // A sender that hangs up early (a timeout, a cut answer) resets its connection: its story, not the receiver's failure.
    server.on('clientError', (_error, socket) => socket.destroy());
    server.on('secureConnection', () => (holder.receiver!.connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port, pems.cert, caFile, folder);
    return holder.receiver;
  }

  /** `https://127.0.0.1:<port><path>`. */
  url(path = '/'): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  /** Answers every request from now on by `rule`. */
  answerBy(rule: AnswerRule): void {
    this.rule = rule;
  }

  /** Answers the next requests with `first`, one each, then every later one with `then` (e.g. three 500s, then 200). */
  answerInTurn(first: readonly (WebhookAnswer | number)[], then: WebhookAnswer | number = 200): void {
    const from = this.received.length;
    const answerOf = (a: WebhookAnswer | number) => (typeof a === 'number' ? { status: a } : a);
    this.rule = (request) => answerOf(first[request.index - from] ?? then);
  }

  /** The first `count` requests that match, once they have come; rejects after `timeoutMs`. */
  async waitFor(
    count: number,
    matches: (request: ReceivedWebhook) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<ReceivedWebhook[]> {
    const matching = () => this.received.filter(matches);
    if (matching().length >= count) return matching().slice(0, count);
    await new Promise<void>((resolve, reject) => {
      const end = (error?: Error) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        if (error) reject(error);
        else resolve();
      };
      const waiter: Waiter = { count, matches, done: () => end(), fail: end };
      const timer = setTimeout(
        () => end(new Error(`waited ${timeoutMs} ms for ${count} matching webhook request(s), ${matching().length} came`)),
        timeoutMs,
      );
      this.waiters.add(waiter);
    });
    return matching().slice(0, count);
  }

  async close(): Promise<void> {
    for (const timer of this.delays) clearTimeout(timer);
    for (const waiter of this.waiters) waiter.fail(new Error('the webhook receiver was closed while waited on'));
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    this.folder.remove();
  }

  private answer(method: string, path: string, headers: IncomingHttpHeaders, rawBody: Buffer, res: ServerResponse): void {
    const request = { method, path, headers, rawBody, body: rawBody.toString('utf8'), receivedAt: new Date(), index: this.received.length };
    this.received.push(request);
    for (const waiter of this.waiters) if (this.received.filter(waiter.matches).length >= waiter.count) waiter.done();
    const { status, body = '', headers: answerHeaders = {}, delayMs = 0 } = this.rule(request);
    const reply = () => {
      if (res.destroyed) return;
      res.writeHead(status, answerHeaders);
      res.end(body);
    };
    if (delayMs <= 0) return reply();
    const timer = setTimeout(() => {
      this.delays.delete(timer);
      reply();
    }, delayMs);
    this.delays.add(timer);
  }
}
