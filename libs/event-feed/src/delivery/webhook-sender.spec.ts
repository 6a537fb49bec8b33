import { createServer } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { WebhookReceiver } from '../../../../test/support/webhook-receiver';
import { WebhookSender } from './webhook-sender';
import { newWebhookSecret, webhookHeaders } from './webhook-signature';

const secret = newWebhookSecret();
const body = JSON.stringify({ id: 'msg_1', type: 'purchase.completed', data: { purchase_id: 'p1' } });
const headers = () => webhookHeaders([secret], 'msg_1', Math.floor(Date.now() / 1000), body);

describe('WebhookSender', () => {
  let receiver: WebhookReceiver;
  let sender: WebhookSender;
  const post = (url = receiver.url('/hooks'), to = sender) => to.send({ url, headers: headers(), body });

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answerBy(() => ({ status: 200 }));
    sender = new WebhookSender({ allowPrivateAddresses: true, ca: receiver.ca, timeoutMs: 2000 });
  });
  afterEach(() => sender.close());

  it('POSTs the signed body, and a 2xx is a success', async () => {
    receiver.answerBy(() => ({ status: 204 }));
    const attempt = await post();
    expect(attempt).toEqual({ status: 204, latencyMs: expect.any(Number), responseExcerpt: '', error: null, outcome: 'succeeded' });
    const [got] = receiver.received;
    expect(got).toMatchObject({ method: 'POST', path: '/hooks', body });
    expect(got.headers['content-type']).toBe('application/json');
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toEqual(JSON.parse(body));
  });

  it('keeps the connection open for the next calls to the same receiver', async () => {
    const before = receiver.connections;
    for (let i = 0; i < 3; i++) expect((await post()).outcome).toBe('succeeded');
    expect(receiver.connections - before).toBe(1);
  });

  it('counts a 500 as a failure, with the start of the answer', async () => {
    receiver.answerBy(() => ({ status: 500, body: 'database down' }));
    expect(await post()).toMatchObject({
      status: 500,
      responseExcerpt: 'database down',
      error: 'answered 500 Internal Server Error',
      outcome: 'failed',
    });
  });

  it('takes a 410 as the endpoint being gone', async () => {
    receiver.answerBy(() => ({ status: 410 }));
    expect(await post()).toMatchObject({ status: 410, outcome: 'gone' });
  });

  it('does not follow a redirect, and says so', async () => {
    receiver.answerBy((request) =>
      request.path === '/hooks' ? { status: 302, headers: { location: receiver.url('/elsewhere') } } : { status: 200 },
    );
    const attempt = await post();
    expect(attempt).toMatchObject({ status: 302, outcome: 'failed', error: 'answered 302 Found: redirects are not followed' });
    expect(receiver.received.map((r) => r.path)).toEqual(['/hooks']);
  });

  it('gives up on an answer slower than the deadline', async () => {
    const quick = new WebhookSender({ allowPrivateAddresses: true, ca: receiver.ca, timeoutMs: 300 });
    receiver.answerInTurn([{ status: 200, delayMs: 3000 }], 200);
    const attempt = await post(undefined, quick);
    expect(attempt).toMatchObject({ status: null, outcome: 'failed', error: 'no answer within 300 ms' });
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(290);
    expect(attempt.latencyMs).toBeLessThan(2000);
    // The timed-out connection is not handed to the next call.
    expect((await post(undefined, quick)).outcome).toBe('succeeded');
    quick.close();
  });

  it('reads no more than the first 1,024 bytes of a big answer', async () => {
    receiver.answerBy(() => ({ status: 200, body: 'x'.repeat(5_000_000) }));
    const before = receiver.connections;
    const attempt = await post();
    expect(attempt).toMatchObject({ status: 200, outcome: 'succeeded', responseExcerpt: 'x'.repeat(1024) });
    expect(attempt.latencyMs).toBeLessThan(2000);
    // It hung up on the rest: the next call needs a connection of its own.
    receiver.answerBy(() => ({ status: 200 }));
    await post();
    expect(receiver.connections - before).toBe(2);
  });

  it('keeps whole UTF-8 characters in the excerpt', async () => {
    receiver.answerBy(() => ({ status: 400, body: '✓'.repeat(1000) })); // 3 bytes each: the 342nd is cut at 1,024
    expect((await post()).responseExcerpt).toBe('✓'.repeat(341));
  });

  it('keeps an excerpt every store can hold: a NUL the receiver answered is kept as U+FFFD', async () => {
    // A NUL in an attempt's excerpt made its event one PostgreSQL cannot store: the attempt was never
    // recorded and the delivery job failed, sending the event again on each of its retries.
    receiver.answerBy(() => ({ status: 500, body: Buffer.from('oops\u0000nul \xed\xa0\x80', 'latin1') }));
    const attempt = await post();
    expect(attempt).toMatchObject({ status: 500, outcome: 'failed', responseExcerpt: 'oops\ufffdnul \ufffd\ufffd\ufffd' });
  });

  it('refuses a loopback receiver unless allowed private addresses, by IP or by name', async () => {
    const guarded = new WebhookSender({ ca: receiver.ca });
    const byIp = await post(receiver.url('/hooks'), guarded);
    expect(byIp).toMatchObject({ status: null, outcome: 'failed', error: 'refused: the host is a loopback address' });
    const byName = await post(`https://localhost:${receiver.port}/hooks`, guarded);
    expect(byName).toMatchObject({
      status: null,
      outcome: 'failed',
      error: expect.stringMatching(/^refused: the host resolves only to refused addresses \(.*loopback/),
    });
    expect(await post(`https://[::ffff:127.0.0.1]:${receiver.port}/hooks`, guarded)).toMatchObject({
      outcome: 'failed',
      error: expect.stringContaining('loopback'),
    });
    expect(receiver.received).toHaveLength(0);
    guarded.close();

    expect((await post(`https://localhost:${receiver.port}/hooks`)).outcome).toBe('succeeded');
    expect((await post(receiver.url('/hooks'))).outcome).toBe('succeeded');
  });

  it('judges the address it connects to, not one a name had earlier', async () => {
    // The name resolved to a public address when it was checked, and to loopback now (DNS rebinding).
    const rebinding = new WebhookSender({ ca: receiver.ca, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const attempt = await post(`https://partner.example:${receiver.port}/hooks`, rebinding);
    expect(attempt).toMatchObject({
      outcome: 'failed',
      error: 'refused: the host resolves only to refused addresses (loopback)',
    });
    expect(receiver.received).toHaveLength(0);
    rebinding.close();
  });

  it('refuses a plain http URL without connecting', async () => {
    const attempt = await post(`http://127.0.0.1:${receiver.port}/hooks`);
    expect(attempt).toMatchObject({ status: null, outcome: 'failed', error: 'refused: only https is sent to, not http' });
    expect(receiver.received).toHaveLength(0);
  });

  it('fails on a certificate it does not trust', async () => {
    const untrusting = new WebhookSender({ allowPrivateAddresses: true });
    const attempt = await post(undefined, untrusting);
    expect(attempt).toMatchObject({ status: null, outcome: 'failed', error: expect.stringMatching(/^TLS failed: /) });
    untrusting.close();
  });

  it('fails on a port nobody listens on', async () => {
    const port = await closedPort();
    const attempt = await post(`https://127.0.0.1:${port}/hooks`);
    expect(attempt).toMatchObject({ status: null, outcome: 'failed', error: expect.stringMatching(/^connection failed: .*ECONNREFUSED/) });
  });
});

/** A port that was free a moment ago and is closed now. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
