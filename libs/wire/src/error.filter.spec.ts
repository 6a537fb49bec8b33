import { CannotFulfil, CannotFulfilReseller, NotFound, ValidationFailed } from '@deals/kernel';
import { ArgumentsHost, HttpException, Logger, NotFoundException } from '@nestjs/common';
import { ErrorFilter } from './error.filter';

/** Runs the filter against a reply that records what was sent. */
function answer(exception: unknown) {
  const sent: { status?: number; body?: unknown; headers: Record<string, string> } = { headers: {} };
  const reply = {
    header: (name: string, value: string) => ((sent.headers[name] = value), reply),
    status: (code: number) => ((sent.status = code), reply),
    send: (body: unknown) => ((sent.body = body), reply),
  };
  const host = { switchToHttp: () => ({ getResponse: () => reply, getRequest: () => undefined }) } as unknown as ArgumentsHost;
  new ErrorFilter().catch(exception, host);
  return sent;
}

describe('error filter', () => {
  beforeAll(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));

  it('writes domain errors as error bodies with their status', () => {
    expect(answer(new NotFound('deal x not found'))).toMatchObject({
      status: 404,
      body: { status: 'error', error_type: 'find_failed', error_msg: 'deal x not found' },
    });
    expect(answer(new CannotFulfil('sold out'))).toMatchObject({ status: 422, body: { error_type: 'cannot_fufill' } });
    expect(answer(new CannotFulfilReseller('sold out'))).toMatchObject({ status: 422, body: { error_type: 'cannot_fulfill' } });
  });

  it('lists validation entries under errors', () => {
    const issue = { type: 'missing_field' as const, resource: 'user', field: 'email', message: 'is required' };
    expect(answer(new ValidationFailed([issue]))).toEqual({
      status: 422,
      headers: {},
      body: { status: 'error', error_type: 'validation_failed', error_msg: 'email is required', errors: [issue] },
    });
  });

  it('answers an unknown route as find_failed and a throttled call with Retry-After', () => {
    expect(answer(new NotFoundException())).toMatchObject({ status: 404, body: { error_type: 'find_failed' } });
    expect(answer(new HttpException('slow down', 429))).toMatchObject({
      status: 429,
      headers: { 'retry-after': '1' },
      body: { error_type: 'rate_limited' },
    });
  });

  it('hides an unexpected failure behind a 500 with no stack or message of its own', () => {
    const sent = answer(new Error('connection string mongodb://user:secret@host failed at /srv/app/x.js:10'));
    expect(sent).toEqual({
      status: 500,
      headers: {},
      body: { status: 'error', error_type: 'internal_error', error_msg: 'the service failed to answer; the failure is logged' },
    });
  });
});
