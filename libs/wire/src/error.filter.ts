import { DomainError } from '@deals/kernel';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { errorBody } from './error-body';

interface FastifyError {
  code?: string;
  statusCode?: number;
  message?: string;
}

/**
 * Every failure leaves the service in the part 7 body: domain errors with their own status and
 * `error_type`, framework errors (unknown route, bad JSON, too many requests) translated, and
 * anything else as a 500 that never carries a stack trace.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body, headers } = this.translate(exception);
    if (status >= 500) this.logger.error(exception instanceof Error ? exception.stack ?? exception.message : String(exception));
    for (const [name, value] of Object.entries(headers)) void reply.header(name, value);
    void reply.status(status).send(body);
  }

  private translate(exception: unknown) {
    const headers: Record<string, string> = {};
    if (exception instanceof DomainError) {
      return { status: exception.httpStatus, body: errorBody(exception.errorType, exception.message, exception.issues, exception.extra), headers };
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
    return { status: 500, body: errorBody('internal_error', 'the service failed to answer; the failure is logged'), headers };
  }
}
