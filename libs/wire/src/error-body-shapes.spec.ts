import Fastify, { FastifyInstance } from 'fastify';
import { errorBody } from './error-body';
import { ErrorBodyShape, shapeErrorBodies } from './error-body-shapes';

const shape: ErrorBodyShape = (body) => ({ status: 'error', message: body.error_msg, errors: { reasons: [body.error_type] } });

/** A server whose `/shaped` route is marked to shape its 422s; each route answers the status and body given in the query. */
async function server(): Promise<{ app: FastifyInstance; seen: unknown[] }> {
  const app = Fastify();
  const seen: unknown[] = [];
  shapeErrorBodies(app);
  const answer = (request: { query: unknown }, reply: { status(code: number): { send(body: unknown): unknown } }) => {
    const { status, body, buffer } = request.query as { status: string; body: string; buffer?: string };
    return reply.status(Number(status)).send(buffer ? Buffer.from(body) : JSON.parse(body));
  };
  const keep = (_request: unknown, _reply: unknown, payload: unknown, done: (error: null, payload: unknown) => void) => {
    seen.push(String(payload));
    done(null, payload);
  };
  app.get('/shaped', { config: { errorBodyShapes: { 422: shape } }, onSend: keep }, answer as never);
  app.get('/plain', answer as never);
  await app.ready();
  return { app, seen };
}

const call = (app: FastifyInstance, url: string, status: number, body: unknown, buffer = false) =>
  app
    .inject({ method: 'GET', url, query: { status: String(status), body: JSON.stringify(body), ...(buffer ? { buffer: '1' } : {}) } })
    .then((reply) => ({ status: reply.statusCode, body: reply.json() }));

describe("shapeErrorBodies: a marked route's error bodies of a status in its own shape", () => {
  const refusal = errorBody('idempotency_key_reused', 'this key was used for another request');
  const shaped = { status: 'error', message: 'this key was used for another request', errors: { reasons: ['idempotency_key_reused'] } };

  it('shapes an error body of the marked status, serialized or sent as kept bytes, before the route’s own onSend hooks', async () => {
    const { app, seen } = await server();
    expect(await call(app, '/shaped', 422, refusal)).toEqual({ status: 422, body: shaped });
    expect(await call(app, '/shaped', 422, refusal, true)).toEqual({ status: 422, body: shaped });
    expect(seen.map((text) => JSON.parse(text as string))).toEqual([shaped, shaped]);
    await app.close();
  });

  it('leaves a body already shaped, another status, and an unmarked route as they are', async () => {
    const { app } = await server();
    expect(await call(app, '/shaped', 422, shaped, true)).toEqual({ status: 422, body: shaped });
    const withIssues = errorBody('validation_failed', 'x is required', [
      { type: 'missing_field', resource: 'request', field: 'x', message: 'is required' },
    ]);
    expect((await call(app, '/shaped', 422, withIssues)).body).toEqual({
      status: 'error',
      message: 'x is required',
      errors: { reasons: ['validation_failed'] },
    });
    expect(await call(app, '/shaped', 400, refusal)).toEqual({ status: 400, body: refusal });
    expect(await call(app, '/shaped', 200, { status: 'success' })).toEqual({ status: 200, body: { status: 'success' } });
    expect(await call(app, '/plain', 422, refusal)).toEqual({ status: 422, body: refusal });
    await app.close();
  });
});
