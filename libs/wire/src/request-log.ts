import { FastifyInstance, FastifyReply, FastifyRequest, LogController } from 'fastify';
import type { LoggerService } from '@nestjs/common';
import pino from 'pino';

/** Strips secrets from what a log line shows of a URL (the v1 api_key rides in the query). */
export function loggableUrl(url: string | undefined): string {
  if (!url) return '';
  // Parameters start at the first `?`, or at a `;` or `&` in the path: a client that malforms its
  // address (`/deals/x;api_key=…`, `/users/x&pass=…`, `??api_key=…`) still sent its secret.
  const start = url.search(/[?;&]/);
  if (start < 0) return withoutEmails(url.replace(API_KEY_LIKE, '[redacted]'));
  // Names are judged as the query parser reads them (`%61pi_key` is api_key), and by each word of
  // them (`api_key[]`, `credit_card[verification_value]`, ` api_key` from `+api_key`, `api_key%00`);
  // values of secret names, and any value that looks like a card number, are not written.
  // `&` and `;` both separate parameters for some parsers.
  const parts = url
    .slice(start + 1)
    .split(/([&;])/)
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq < 0) return part;
      const names = decodedName(part.slice(0, eq))
        .split(/[^a-z0-9_]+/)
        .filter(Boolean);
      const secret =
        names.some((name) => SECRET_NAMES.has(name)) || CARD_LIKE.test(decodedName(part.slice(eq + 1)).replace(/[\s./-]/g, ''));
      return secret ? `${part.slice(0, eq)}=[redacted]` : part;
    });
  // And a partner's API key wherever it stands, whatever name it was given; and any email address
  // (`/api/v1/users/<email>/update_by_email`): a log outlives a user's erasure.
  return withoutEmails(`${url.slice(0, start + 1)}${parts.join('')}`.replace(API_KEY_LIKE, '[redacted]'));
}

/**
 * Each path segment, parameter name or value holding an `@` (perhaps escaped) written `[email]`.
 * Matched part by part, in one pass: a pattern spanning the `@`, tried again from every character
 * of a long part without one (a 16 KB path), took a second of CPU a request.
 */
function withoutEmails(text: string): string {
  return text.replace(URL_PART, (part) => (EMAIL_MARK.test(part) ? '[email]' : part));
}

/** A path segment, or a parameter's name or value. */
const URL_PART = /[^/?&;=]+/g;
const EMAIL_MARK = /@|%40/i;

/** A partner API key (`dk_` and 32 base64url characters: partner-credentials.ts), its `_` perhaps escaped. */
const API_KEY_LIKE = /dk(?:_|%5f)(?:[A-Za-z0-9_-]|%5f|%2d){20,}/gi;

const SECRET_NAMES = new Set([
  'api_key',
  'access_token',
  'token',
  'password',
  'pass',
  'passwd',
  'password_confirmation',
  'pass_confirmation',
  'key',
  'number',
  'verification_value',
  'cvv',
  'cvv2',
  'cvc',
  'security_code',
]);
/** 12 to 19 digits in a row anywhere in a value (separators taken out): as long as a card number. */
const CARD_LIKE = /\d{12,19}/;

function decodedName(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return text.toLowerCase();
  }
}

/**
 * Fields of a database's error that quote the data it failed on: PostgreSQL's `detail` (`Key (email)=(…)
 * already exists`), `where` (the start of the JSON it could not read), `hint` and the query's text.
 * A logged error keeps its name, message, code and stack without them: a log outlives the data.
 */
const ERROR_FIELDS_QUOTING_DATA = ['detail', 'where', 'hint', 'internalQuery', 'query', 'parameters'] as const;

/** pino's serializer of an error (`err`), without the fields that quote data (see above). */
export function loggableError(error: unknown): unknown {
  const shown = pino.stdSerializers.err(error as Error) as unknown;
  if (shown === null || typeof shown !== 'object') return shown;
  const kept = { ...(shown as Record<string, unknown>) };
  for (const field of ERROR_FIELDS_QUOTING_DATA) delete kept[field];
  return kept;
}

/** The serializers of every logger of the service. */
export const LOG_SERIALIZERS = { err: loggableError };

/** The one pino logger of a process: JSON lines on stdout, or appended to `file` when given. */
export function serviceLogger(level: string, file: string | null = null): pino.Logger {
  const options = { level, base: { pid: process.pid }, serializers: LOG_SERIALIZERS };
  return file ? pino(options, pino.destination({ dest: file, sync: true, mkdir: true })) : pino(options);
}

/**
 * What a request-log line says of its request: method, address with secrets redacted, status. A
 * refused request (4xx) is named by its route and its parameters' names alone: what it was refused
 * for may be the values it carries (an unknown id, a malformed email), and a log outlives them.
 */
function requestLine(request: FastifyRequest, statusCode: number | null) {
  const refused = statusCode !== null && statusCode >= 400 && statusCode < 500;
  return { req: { method: request.method, url: refused ? refusedUrl(request) : loggableUrl(request.url) }, res: { statusCode } };
}

/** A refused request's address without a value: its route (`/users/:user_id`), or the first part of its path, and its parameters' names. */
export function refusedUrl(request: Pick<FastifyRequest, 'url'> & { routeOptions?: { url?: string } }): string {
  const url = request.url ?? '';
  const cut = url.search(/[?;&]/);
  const path = cut < 0 ? url : url.slice(0, cut);
  const first = /^\/[A-Za-z0-9_.-]*/.exec(path)?.[0] ?? '/';
  const route = request.routeOptions?.url || (first.length < path.length ? `${first}/…` : first);
  if (cut < 0) return route;
  const names = url
    .slice(cut + 1)
    .split(/[&;]/)
    .filter(Boolean)
    .map((part) => `${part.split('=')[0].replace(URL_VALUE_LIKE, '…')}=…`);
  return `${route}?${names.join('&')}`;
}

/** A parameter name unlike ours (letters, `_` and brackets: `per_page`, `credit_card[number]`), written `…`. */
const URL_VALUE_LIKE = /^(?![A-Za-z_[\]]{1,40}$).*$/s;

/**
 * One log line per request, written by Fastify's own logger when the response is done: request id,
 * method, URL with secrets redacted, status and time. (A Nest logging middleware costs a middleware
 * layer and an AsyncLocalStorage context on every request: a third of the deal route's time.)
 * Bodies are never logged.
 */
export class RequestLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { ...requestLine(request, reply.statusCode), responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/**
 * The request-log line of a request its client gave up on (the connection closed before the
 * answer was sent, while the body was still coming or while the service was working on it):
 * Fastify's completion line never comes for it, and an operator looking for a purchase a partner
 * says timed out must find it. The work it started goes on; its events, if any, are in the log
 * under the same request id. (Fastify's `onRequestAbort` sees only the first of the two cases.)
 */
export function logAbortedRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) {
        request.log.info(requestLine(request, null), 'request aborted by the client');
      }
    });
    done();
  });
}

/** Nest's own start-up chatter at its `log` level: a line per module and per route at every start. */
const NEST_BOOT_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/**
 * The service's Nest logger: every line of the service's own contexts, and of Nest's, but Nest's
 * start-up listing of modules and routes (~60 lines at each start, nothing an operator acts on).
 */
export class ServiceLogLines implements LoggerService {
  constructor(private readonly lines: LoggerService) {}

  log(message: unknown, ...rest: unknown[]): void {
    if (NEST_BOOT_CONTEXTS.has(String(rest[rest.length - 1]))) return;
    this.lines.log(message, ...rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.lines.error(message, ...rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.lines.warn(message, ...rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.lines.debug?.(message, ...rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.lines.verbose?.(message, ...rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    (this.lines.fatal ?? this.lines.error).call(this.lines, message, ...rest);
  }
}

/**
 * The request-log line of a request refused before routing (an address that is not UTF-8, a path
 * part too long): Fastify's completion line never comes for those.
 */
export function logRefusedBeforeRouting(request: FastifyRequest, statusCode: number): void {
  request.log.info(requestLine(request, statusCode), 'request refused before routing');
}
