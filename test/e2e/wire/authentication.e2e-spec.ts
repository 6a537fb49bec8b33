import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Scheduler } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { chicago } from '../../support/catalogue-fixtures';
import { InsecureHttps } from '../../support/insecure-https';

const unauthorized = (msg: string) => ({ status: 'error', error_type: 'unauthorized', error_msg: msg });

describe('authentication and the wire', () => {
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;
  let auditor: Awaited<ReturnType<TestApi['createPartner']>>;

  beforeAll(async () => {
    api = await TestApi.start();
    partner = await api.createPartner('Acme');
    auditor = await api.createPartner('Audit office', 'auditor');
    await api.importRegions([chicago]);
  });
  afterAll(() => api.close());

  describe('v1 and unprefixed calls take api_key', () => {
    it('refuses a missing key with 401 and the error body', async () => {
      const reply = await api.call('GET', '/api/v1/regions');
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual(unauthorized('missing api_key: pass your partner API key as the api_key query parameter'));
    });
    it('refuses a wrong key, and the password or username in its place', async () => {
      for (const key of ['dk_wrong', partner.password, partner.username]) {
        const reply = await api.call('GET', '/deals/anything', { apiKey: key });
        expect(reply.status).toBe(401);
        expect(reply.body).toEqual(unauthorized('wrong api_key'));
      }
    });
    it('accepts the right key', async () => {
      expect((await api.call('GET', '/api/v1/regions/chicago', { apiKey: partner.apiKey })).status).toBe(200);
    });
    it('takes a key repeated with one value, and refuses two different keys', async () => {
      const key = encodeURIComponent(partner.apiKey);
      expect((await api.call('GET', `/api/v1/regions/chicago?api_key=${key}&api_key=${key}`)).status).toBe(200);
      const mixed = await api.call('GET', `/api/v1/regions/chicago?api_key=${key}&api_key=dk_other`);
      expect(mixed.status).toBe(401);
      expect(mixed.body).toEqual(unauthorized('api_key given 2 times with different values: give it once'));
    });
    it('authenticates before routing: an unknown path needs credentials too', async () => {
      expect((await api.call('GET', '/no/such/path')).status).toBe(401);
      const known = await api.call('GET', '/no/such/path', { apiKey: partner.apiKey });
      expect(known.status).toBe(404);
      expect(known.body).toEqual({ status: 'error', error_type: 'find_failed', error_msg: 'no such resource or endpoint' });
    });
  });

  describe('/api/v3 calls take HTTP basic credentials', () => {
    it('refuses missing credentials with 401, a challenge and the error body', async () => {
      const reply = await api.call('GET', '/api/v3/deals');
      expect(reply.status).toBe(401);
      expect(reply.headers['www-authenticate']).toMatch(/^Basic /);
      expect(reply.body).toEqual(unauthorized('missing credentials: give your username and password as HTTP basic credentials'));
    });
    it('refuses a wrong password, an unknown user and the api_key instead', async () => {
      for (const basic of [
        { username: partner.username, password: 'wrong' },
        { username: 'nobody', password: partner.password },
        { username: auditor.username, password: partner.password },
      ]) {
        const reply = await api.call('GET', '/api/v3/deals', { basic });
        expect(reply.status).toBe(401);
        expect(reply.body).toEqual(unauthorized('wrong username or password'));
      }
      expect((await api.call('GET', '/api/v3/deals', { apiKey: partner.apiKey })).status).toBe(401);
    });
    it('lets the right credentials through to routing', async () => {
      const reply = await api.call('GET', '/api/v3/no-such-call', { basic: { username: partner.username, password: partner.password } });
      expect(reply.status).toBe(404);
    });
    it('judges an escaped address by the route it reaches: /%61pi/v3 takes basic credentials too', async () => {
      for (const path of ['/%61pi/v3/deals', '/api/v%33/deals', '/%61pi/v3/no-such-call']) {
        const reply = await api.call('GET', path, { apiKey: partner.apiKey });
        expect([path, reply.status, reply.body]).toEqual([
          path,
          401,
          unauthorized('missing credentials: give your username and password as HTTP basic credentials'),
        ]);
      }
      expect((await api.call('GET', '/%61pi/v3/deals', { basic: { username: partner.username, password: partner.password } })).status).toBe(
        200,
      );
    });
  });

  it('answers a malformed address or an overlong path part with the error body, never echoing the address', async () => {
    const bad = await api.call('GET', `/regions/%E0%A4%A/deals?api_key=${partner.apiKey}`);
    expect([bad.status, bad.body]).toEqual([
      400,
      { status: 'error', error_type: 'bad_request', error_msg: 'the address is malformed (an escape that is not UTF-8)' },
    ]);
    expect(JSON.stringify(bad.body)).not.toContain(partner.apiKey);
    // An email of 200 characters is a path part update_by_email takes (Fastify's default limit was 100).
    const email = `${'a'.repeat(188)}@example.com`;
    const long = await api.call('PUT', `/api/v1/users/${email}/update_by_email`, { apiKey: partner.apiKey, body: { first_name: 'Long' } });
    expect(long.status).toBe(200);
    const tooLong = await api.call('GET', `/deals/${'x'.repeat(1100)}`, { apiKey: partner.apiKey });
    expect([tooLong.status, tooLong.body]).toEqual([
      414,
      { status: 'error', error_type: 'bad_request', error_msg: 'a part of the address is longer than 1024 characters' },
    ]);
  });

  /** Sends `head` as the whole request over TLS and reads the answer until the server closes. */
  const raw = (head: string) =>
    new Promise<string>((resolve, reject) => {
      const url = new URL(api.url);
      const socket = tlsConnect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => socket.write(head));
      let answer = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });
  /** The status line and the JSON body of a raw answer. */
  const split = (answer: string) => [answer.split('\r\n')[0], JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))];

  it("answers what Node's HTTP parser refuses (oversized headers, a control character in a header) with the error body, echoing nothing", async () => {
    const secret = `api_key=${partner.apiKey}`;
    const big = await raw(`GET /deals?${secret} HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(split(big)).toEqual([
      'HTTP/1.1 431 Request Header Fields Too Large',
      { status: 'error', error_type: 'bad_request', error_msg: 'the request headers are too large' },
    ]);
    const control = await raw(`GET /deals?${secret} HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n`);
    expect(split(control)).toEqual([
      'HTTP/1.1 400 Bad Request',
      {
        status: 'error',
        error_type: 'bad_request',
        error_msg: 'the request is not valid HTTP (a header with a control character, a malformed line)',
      },
    ]);
    for (const answer of [big, control]) expect(answer).not.toContain(partner.apiKey);
  });

  it('answers what Node would answer with an empty body (no Host, an unknown Expect, CONNECT) with the error body', async () => {
    const secret = `api_key=${partner.apiKey}`;
    const noHost = await raw(`GET /api/v1/regions/chicago?${secret} HTTP/1.1\r\n\r\n`);
    expect(split(noHost)).toEqual([
      'HTTP/1.1 400 Bad Request',
      { status: 'error', error_type: 'bad_request', error_msg: 'an HTTP/1.1 request must carry a Host header' },
    ]);
    // HTTP/1.0 has no Host requirement.
    expect((await raw(`GET /api/v1/regions/chicago?${secret} HTTP/1.0\r\n\r\n`)).split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    const expectation = await raw(`GET /api/v1/regions/chicago?${secret} HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n`);
    expect(split(expectation)).toEqual([
      'HTTP/1.1 417 Expectation Failed',
      { status: 'error', error_type: 'bad_request', error_msg: 'the only expectation served is "Expect: 100-continue"' },
    ]);
    const connect = await raw(`CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`);
    expect(split(connect)).toEqual([
      'HTTP/1.1 400 Bad Request',
      { status: 'error', error_type: 'bad_request', error_msg: 'CONNECT is not served: this service is not a proxy' },
    ]);
    for (const answer of [noHost, expectation, connect]) expect(answer).not.toContain(partner.apiKey);
  });

  it('keeps only hashes of the credentials', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const log = readFileSync(join(api.dataDir, 'events.sqlite')).toString('latin1');
    for (const secret of [partner.apiKey, partner.password, auditor.apiKey, auditor.password]) expect(log).not.toContain(secret);
  });

  it('refuses plain HTTP on the same port with the error body', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(api.port, '127.0.0.1', () =>
        socket.write(`GET /api/v1/regions?api_key=${partner.apiKey} HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
      status: 'error',
      error_type: 'https_required',
      error_msg: 'plain HTTP is refused: call this service over HTTPS',
    });
  });

  it('answers health without credentials, naming each port backend', async () => {
    const reply = await api.call('GET', '/health');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: 'ok',
      info: {
        eventStore: { status: 'up', backend: 'sqlite' },
        viewStore: { status: 'up', backend: 'in-process' },
        scheduler: { status: 'up', backend: 'in-process' },
      },
    });
  });

  it('tells liveness from readiness: /health/live always, /health/ready once every port answers and every view is caught up', async () => {
    expect((await api.call('GET', '/health/live')).body).toEqual({ status: 'ok' });
    expect((await api.call('GET', '/health/ready')).body).toEqual({ status: 'ready', ports: 'up', down: [], lagging_views: [] });
    const ping = jest.spyOn(api.get(Scheduler), 'ping').mockRejectedValue(new Error('redis is not reachable'));
    try {
      const reply = await api.call('GET', '/health/ready');
      expect(reply.status).toBe(503);
      expect(reply.body).toEqual({
        status: 'not_ready',
        ports: 'down',
        down: [{ port: 'scheduler', backend: 'in-process', message: 'redis is not reachable' }],
        lagging_views: [],
      });
      expect((await api.call('GET', '/health/live')).status).toBe(200);
    } finally {
      ping.mockRestore();
    }
  });

  it('answers 503 naming the part that is down, and why', async () => {
    const ping = jest.spyOn(api.get(Scheduler), 'ping').mockRejectedValue(new Error('redis is not reachable'));
    try {
      const reply = await api.call('GET', '/health');
      expect(reply.status).toBe(503);
      expect(reply.body).toMatchObject({
        status: 'error',
        info: { eventStore: { status: 'up' }, viewStore: { status: 'up' } },
        error: { scheduler: { status: 'down', backend: 'in-process', message: 'redis is not reachable' } },
      });
    } finally {
      ping.mockRestore();
    }
  });

  it('gives every response a request id, keeping a sane one the caller sent', async () => {
    const mine = await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey, headers: { 'x-request-id': 'req-123' } });
    expect(mine.headers['x-request-id']).toBe('req-123');
    const made = await api.call('GET', '/api/v1/regions', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("tells every answer not to be sniffed: errors that echo what the caller sent, an auditor's among them", async () => {
    const echoes = [
      await api.call('GET', '/audit/purchases/<script>alert(1)</script>', { apiKey: auditor.apiKey }),
      await api.call('GET', '/audit/pages/purchases/<b>x</b>', { apiKey: auditor.apiKey }),
      await api.call('GET', '/deals/<b>x</b>', { apiKey: partner.apiKey }),
      await api.call('GET', '/no/such/<b>path</b>'),
      await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey }),
      await api.call('GET', '/health'),
    ];
    expect(echoes.map((reply) => reply.headers['x-content-type-options'])).toEqual(echoes.map(() => 'nosniff'));
  });

  it('accepts a GET that declares a JSON body but sends none', async () => {
    const reply = await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey, headers: { 'content-type': 'application/json' } });
    expect(reply.status).toBe(200);
  });

  it('refuses a malformed JSON body with a 422 naming the body', async () => {
    const { request } = await import('undici');
    const reply = await request(`${api.url}/api/v1/regions?api_key=${partner.apiKey}`, {
      method: 'GET',
      headers: { 'content-type': 'application/json' },
      body: '{"broken":',
      dispatcher: new InsecureHttps(),
    });
    expect(reply.statusCode).toBe(422);
    expect(await reply.body.json()).toMatchObject({
      status: 'error',
      error_type: 'validation_failed',
      errors: [{ type: 'invalid', resource: 'request', field: 'body' }],
    });
  });
});
