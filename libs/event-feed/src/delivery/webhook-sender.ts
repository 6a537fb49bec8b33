import { STATUS_CODES } from 'node:http';
import { Agent, request } from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import { bareHost, guardedLookup, RefusedAddress, refusedLiteral, ResolveHost, resolveWithSystem } from './address-guard';

/** What one POST of a webhook came to. */
export interface WebhookAttempt {
  /** The answer's HTTP status; null when none came (refused, unreachable, TLS, timed out). */
  status: number | null;
  /** From the start of the attempt to its end: the answer read as far as kept, or the failure. */
  latencyMs: number;
  /** The first {@link RESPONSE_EXCERPT_BYTES} bytes of the answer's body, as UTF-8. */
  responseExcerpt: string;
  /** What went wrong, for people; null when it succeeded. */
  error: string | null;
  /** `gone`: the receiver answered 410, asking for no more deliveries to this endpoint. */
  outcome: 'succeeded' | 'failed' | 'gone';
}

/** One delivery: the endpoint's URL, the headers (see `webhookHeaders`) and the JSON body they sign. */
export interface WebhookRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string;
}

export interface WebhookSenderOptions {
  /** One deadline for the whole attempt: resolving, connecting, TLS and the answer's status. */
  timeoutMs?: number;
  /** Whether private, loopback and other non-public addresses may be sent to (tests, on-premises receivers). */
  allowPrivateAddresses?: boolean;
  /** Certificates to trust instead of Node's own (tests). Without it `NODE_EXTRA_CA_CERTS` adds to Node's. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** How host names are resolved (tests); the system resolver otherwise. */
  resolve?: ResolveHost;
}

/** How long an attempt may take when the sender is not told otherwise. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** How much of an answer is read and kept; the rest is never read. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/**
 * Calls in flight to one receiver at once; the others wait their turn (their deadline starts with
 * it). As many connections are kept open, so a burst of deliveries reuses them instead of making
 * a TLS handshake each.
 */
const IN_FLIGHT_PER_ORIGIN = 16;
const IDLE_SOCKETS_PER_ORIGIN = IN_FLIGHT_PER_ORIGIN;
/**
 * How long a kept connection may idle: under the 5 s after which Node servers close theirs, so a
 * call rarely goes out on a connection the receiver is just closing (it would fail as a reset).
 * It does not apply while a call is under way; the attempt's deadline does.
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * POSTs webhooks over HTTPS, one attempt per call, and says how each went: a 2xx in time is
 * `succeeded`, a 410 is `gone`, anything else (another status, a redirect, which is not
 * followed, a refused address, a connection or TLS error, the deadline) is `failed`. Retrying is
 * the caller's business. Connections to a receiver are kept open and reused between calls.
 */
export class WebhookSender {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly allowPrivateAddresses: boolean;
  /** Per receiver (origin): calls in flight, and those waiting for a turn. */
  private readonly turns = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(options: WebhookSenderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.allowPrivateAddresses = options.allowPrivateAddresses ?? false;
    // The agent's options win over a request's when it connects: every socket it opens resolves through the guard,
    // which judges the very address connected to (an IP literal is judged in `send`, as no lookup is made for it).
    this.agent = new Agent({
      keepAlive: true,
      maxFreeSockets: IDLE_SOCKETS_PER_ORIGIN,
      timeout: IDLE_SOCKET_MS,
      scheduling: 'lifo',
      lookup: guardedLookup(options.resolve ?? resolveWithSystem, this.allowPrivateAddresses),
      ...(options.ca ? { ca: options.ca } : {}),
    });
  }

  async send({ url, headers, body }: WebhookRequest): Promise<WebhookAttempt> {
    const started = performance.now();
    const target = URL.canParse(url) ? new URL(url) : null;
    const refusal = !target
      ? 'not a valid URL'
      : target.protocol !== 'https:'
        ? `only https is sent to, not ${target.protocol.slice(0, -1)}`
        : this.allowPrivateAddresses
          ? null
          : refusedLiteral(bareHost(target));
    if (!target || refusal) return attemptOf(null, '', started, refusal && `refused: ${refusal}`);
    await this.turnAt(target.origin);
    try {
      return await this.post(target, headers, body, performance.now());
    } finally {
      this.turnDone(target.origin);
    }
  }

  private async turnAt(origin: string): Promise<void> {
    let turns = this.turns.get(origin);
    if (!turns) this.turns.set(origin, (turns = { active: 0, waiting: [] }));
    if (turns.active < IN_FLIGHT_PER_ORIGIN) {
      turns.active++;
      return;
    }
    // The turn is handed over with its count (turnDone does not give it back when someone waits).
    await new Promise<void>((resolve) => turns.waiting.push(resolve));
  }

  private turnDone(origin: string): void {
    const turns = this.turns.get(origin)!;
    const next = turns.waiting.shift();
    if (next) return next();
    if (--turns.active === 0) this.turns.delete(origin);
  }

  /** Closes the kept connections; calls under way end as they would. */
  close(): void {
    this.agent.destroy();
  }

  private post(target: URL, headers: WebhookRequest['headers'], body: string, started: number): Promise<WebhookAttempt> {
    return new Promise((resolve) => {
      let status: number | null = null;
      const excerpt = new Excerpt();
      let settled = false;
      const settle = (error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(attemptOf(status, excerpt.text(), started, error));
      };
      const req = request({
        hostname: bareHost(target),
        port: target.port || 443,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent: this.agent,
      });
      const deadline = setTimeout(() => {
        // An answer whose status came in time counts, with as much of its body as had arrived.
        settle(status === null ? `no answer within ${this.timeoutMs} ms` : null);
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (error) => settle(describeFailure(error)));
      req.on('response', (res) => {
        status = res.statusCode ?? null;
        res.on('data', (chunk: Buffer) => {
          if (excerpt.add(chunk)) return;
          settle(null);
          res.destroy(); // the rest is not wanted, and a half-read connection cannot be reused
        });
        res.on('end', () => settle(null));
        res.on('close', () => settle(null));
      });
      req.end(body);
    });
  }
}

/** The first bytes of an answer; `add` says whether there is room for more. */
class Excerpt {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  add(chunk: Buffer): boolean {
    const kept = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - this.bytes);
    this.chunks.push(kept);
    this.bytes += kept.length;
    return this.bytes < RESPONSE_EXCERPT_BYTES;
  }

  /**
   * As UTF-8, without a character cut in two at the limit; bytes that are not UTF-8 and a NUL read as
   * U+FFFD: the excerpt is kept in the delivery's event, and no store keeps a NUL.
   */
  text(): string {
    return new StringDecoder('utf8').write(Buffer.concat(this.chunks)).replaceAll('\u0000', '\ufffd');
  }
}

function attemptOf(status: number | null, responseExcerpt: string, started: number, failure: string | null): WebhookAttempt {
  const latencyMs = Math.round(performance.now() - started);
  if (failure !== null || status === null) {
    return { status, latencyMs, responseExcerpt, error: failure ?? 'no answer', outcome: 'failed' };
  }
  const statusText = `${status} ${STATUS_CODES[status] ?? ''}`.trim();
  if (status >= 200 && status < 300) return { status, latencyMs, responseExcerpt, error: null, outcome: 'succeeded' };
  // eslint-disable-next-line no-restricted-syntax -- the endpoint's answer to a delivery, not a refusal
  if (status === 410) return { status, latencyMs, responseExcerpt, error: `answered ${statusText}`, outcome: 'gone' };
  const error = status >= 300 && status < 400 ? `answered ${statusText}: redirects are not followed` : `answered ${statusText}`;
  return { status, latencyMs, responseExcerpt, error, outcome: 'failed' };
}

/** A transport failure in words: what failed (address, connection, TLS, name), then Node's message. */
function describeFailure(error: Error): string {
  if (error instanceof RefusedAddress) return `refused: ${error.message}`;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  // Connecting to each address of a name in turn fails with all their errors at once.
  const message = error instanceof AggregateError ? error.errors.map((e: Error) => e.message).join('; ') : error.message;
  if (/CERT|SSL|TLS|EPROTO|SIGNATURE|ISSUER/.test(code)) return `TLS failed: ${message}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host not found: ${message}`;
  if (code.startsWith('E')) return `connection failed: ${message}`;
  return message;
}
