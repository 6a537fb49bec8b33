import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { promisify } from 'node:util';
import { WebhookReceiver } from './webhook-receiver';

describe('WebhookReceiver', () => {
  let receiver: WebhookReceiver;

  /** A POST trusting the receiver's certificate: its status, location and body. */
  const post = (path: string, body = '{}', headers: Record<string, string> = {}) =>
    new Promise<{ status: number; location?: string; body: string; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const req = request(
        receiver.url(path),
        { method: 'POST', ca: receiver.ca, headers: { 'content-type': 'application/json', ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              location: res.headers.location,
              body: Buffer.concat(chunks).toString(),
              ms: Date.now() - started,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(() => receiver.close());

  it('keeps each request: method, path, headers, raw body and time', async () => {
    const before = new Date();
    await post('/hooks/a?x=1', '{"café":1}', { 'webhook-id': 'msg_1' });
    expect(receiver.received).toEqual([
      {
        method: 'POST',
        path: '/hooks/a?x=1',
        headers: expect.objectContaining({ 'webhook-id': 'msg_1', 'content-type': 'application/json' }),
        rawBody: Buffer.from('{"café":1}'),
        body: '{"café":1}',
        receivedAt: expect.any(Date),
        index: 0,
      },
    ]);
    expect(receiver.received[0].receivedAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
  });

  it('answers 200 until told otherwise, then in turn: three failures, then success', async () => {
    expect((await post('/')).status).toBe(200);
    receiver.answerInTurn([500, 503, { status: 500, body: 'still down' }], 200);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await post('/')).status);
    expect(statuses).toEqual([500, 503, 500, 200, 200]);
  });

  it('answers by a rule of its own: a 410, a redirect, a late answer', async () => {
    receiver.answerBy(({ path }) =>
      path === '/gone'
        ? { status: 410 }
        : path === '/moved'
          ? { status: 302, headers: { location: '/new' } }
          : { status: 200, body: 'late', delayMs: 300 },
    );
    expect((await post('/gone')).status).toBe(410);
    expect(await post('/moved')).toMatchObject({ status: 302, location: '/new' });
    const late = await post('/slow');
    expect(late).toMatchObject({ status: 200, body: 'late' });
    expect(late.ms).toBeGreaterThanOrEqual(290);
  });

  it('waits for requests that match, and says what came when they do not', async () => {
    const waited = receiver.waitFor(2, (r) => r.path === '/b', 5000);
    await post('/a');
    await post('/b', '{"n":1}');
    await post('/b', '{"n":2}');
    expect((await waited).map((r) => r.body)).toEqual(['{"n":1}', '{"n":2}']);
    expect(await receiver.waitFor(1, (r) => r.path === '/a')).toHaveLength(1);
    await expect(receiver.waitFor(3, (r) => r.path === '/b', 100)).rejects.toThrow(
      'waited 100 ms for 3 matching webhook request(s), 2 came',
    );
  });

  it('records a request at once, before a late answer is sent', async () => {
    receiver.answerBy(() => ({ status: 200, delayMs: 2000 }));
    void post('/slow').catch(() => undefined);
    const [got] = await receiver.waitFor(1, () => true, 1000);
    expect(got.path).toBe('/slow');
  });

  it('writes its certificate where a child process can trust it by NODE_EXTRA_CA_CERTS', async () => {
    expect(readFileSync(receiver.caFile, 'utf8')).toBe(receiver.ca);
    const script = `fetch(${JSON.stringify(receiver.url('/child'))}, { method: 'POST', body: '{}' }).then((r) => console.log(r.status), (e) => { console.error(e.cause ?? e); process.exit(1); })`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: receiver.caFile },
    });
    expect(stdout.trim()).toBe('200');
    expect(receiver.received.map((r) => r.path)).toEqual(['/child']);
  });
});
