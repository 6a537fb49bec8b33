import { DomainError, serverUnavailable, UNAVAILABLE_RETRY_AFTER_S } from '@deals/kernel';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBody, errorBody } from './error-body';

interface FastifyError {
  code?: string;
  statusCode?: number;
  message?: string;
}

/**
 * Every failure leaves the service in the error body: domain errors with their own status and
 * `error_type`, framework errors (unknown route, bad JSON, too many requests) translated, a server
 * the service needs away as a 503 with `Retry-After`, and anything else as a 500 that never
 * carries a stack trace.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const { status, body, headers } = errorAnswer(exception);
    if (status >= 500) this.log(exception, status, http.getRequest<FastifyRequest | undefined>()?.log);
    for (const [name, value] of Object.entries(headers)) void reply.header(name, value);
    void reply.status(status).send(body);
  }

  /**
   * A 5xx, through the request's own logger when there is one, so that the line carries its
   * request id (the request-log line of the same request is found by it). A failure the service
   * names (a processor that failed, a charge with no answer: `DomainError`) is a warning without
   * a stack; anything else is an error with its stack.
   */
  private log(exception: unknown, status: number, log: FastifyBaseLogger | undefined): void {
    if (exception instanceof DomainError) {
      const line = { errorType: exception.errorType, status };
      if (log) log.warn(line, exception.message);
      else this.logger.warn(`${exception.errorType} (${status}): ${exception.message}`);
      return;
    }
    if (status === 503 && serverUnavailable(exception)) {
      // One line each, without a stack: while a server is away every call says the same.
      const line = `a server is not answering: ${exception instanceof Error ? exception.message : String(exception)}`;
      if (log) log.warn({ status }, line);
      else this.logger.warn(line);
      return;
    }
    if (log) log.error({ err: exception, status }, 'the service failed to answer');
    else this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
  }
}

/**
 * The status, error body and headers a failure is answered with: the filter's answer, and a bulk
 * job's item's result (the answer its single call would have had).
 */
export function errorAnswer(exception: unknown): { status: number; body: ErrorBody; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (exception instanceof DomainError) {
    if (exception.retryAfterSeconds !== null) headers['retry-after'] = String(exception.retryAfterSeconds);
    return {
      status: exception.httpStatus,
      body: errorBody(exception.errorType, exception.message, exception.issues, exception.extra),
      headers,
    };
  }
  const fastify = exception as FastifyError;
  if (typeof fastify?.code === 'string' && fastify.code.startsWith('FST_ERR_CTP_')) {
    const issue = { type: 'invalid' as const, resource: 'request', field: 'body', message: fastify.message ?? 'cannot be read' };
    return { status: 422, body: errorBody('validation_failed', `request body ${issue.message}`, [issue]), headers };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === HttpStatus.NOT_FOUND) return { status, body: errorBody('find_failed', 'no such resource or endpoint'), headers };
    if (status === HttpStatus.TOO_MANY_REQUESTS) {
      headers['retry-after'] = '1';
      return { status, body: errorBody('rate_limited', 'too many requests; retry after the time in Retry-After'), headers };
    }
    const message = typeof exception.getResponse() === 'string' ? (exception.getResponse() as string) : exception.message;
    return { status, body: errorBody(status < 500 ? 'bad_request' : 'internal_error', message), headers };
  }
  if (typeof fastify?.statusCode === 'number' && fastify.statusCode < 500) {
    return { status: fastify.statusCode, body: errorBody('bad_request', fastify.message ?? 'bad request'), headers };
  }
  if (serverUnavailable(exception)) {
    headers['retry-after'] = String(UNAVAILABLE_RETRY_AFTER_S);
    return {
      status: 503,
      body: errorBody('service_unavailable', 'a server the service depends on is not answering; send the request again after Retry-After'),
      headers,
    };
  }
  return { status: 500, body: errorBody('internal_error', 'the service failed to answer; the failure is logged'), headers };
}
