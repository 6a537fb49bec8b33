import { FastifyReply, FastifyRequest, LogController } from 'fastify';
import pino from 'pino';

/** Strips secrets from what a log line shows of a URL (the v1 api_key rides in the query). */
export function loggableUrl(url: string | undefined): string {
  if (!url) return '';
  return url.replace(/([?&](?:api_key|access_token|password)=)[^&]*/gi, '$1[redacted]');
}

/** The one pino logger of a process: JSON lines on stdout, or appended to `file` when given. */
export function serviceLogger(level: string, file: string | null = null): pino.Logger {
  const options = { level, base: { pid: process.pid } };
  return file ? pino(options, pino.destination({ dest: file, sync: true, mkdir: true })) : pino(options);
}

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
    const line = {
      req: { method: request.method, url: loggableUrl(request.url) },
      res: { statusCode: reply.statusCode },
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
