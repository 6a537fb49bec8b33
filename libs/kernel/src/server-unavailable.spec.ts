import { StoreBusy, WrongExpectedRevision } from './ports/event-store.port';
import { serverUnavailable } from './server-unavailable';

describe('which failures are a server away or busy (a 503), not a fault of the service (a 500)', () => {
  it.each([
    ['a connection refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['PostgreSQL shutting down', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['a statement cancelled by its timeout', Object.assign(new Error('canceling statement'), { code: '57014' })],
    ['a statement unanswered', new Error('Query read timeout')],
    ['a store that could not order an append in time', new StoreBusy('appends not ordered')],
    ['one wrapped in another', new Error('append failed', { cause: new StoreBusy('appends not ordered') })],
    ['one of an AggregateError', new AggregateError([Object.assign(new Error('x'), { code: 'ETIMEDOUT' })])],
  ])('%s is', (_, error) => expect(serverUnavailable(error)).toBe(true));

  it.each([
    ['a programming error', new TypeError('x is undefined')],
    ['a conflict the engine retries', new WrongExpectedRevision('s', 1, 2)],
    ['a constraint violated', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['not an error at all', 'text'],
  ])('%s is not', (_, error) => expect(serverUnavailable(error)).toBe(false));
});
