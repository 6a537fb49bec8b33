import { HttpAdapterHost } from '@nestjs/core';
import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { TestApi } from '../../support/api-harness';
import { eventually } from '../../support/eventually';
import { tempDir } from '../../support/temp-dir';

describe('isolation between partners, and card data kept out of the log, views and logs', () => {
  let api: TestApi;
  let mine: string;
  let theirs: string;
  let userId: string;
  let cardId: string;
  const logs = tempDir('logs');
  const logFile = join(logs.path, 'service.log');
  beforeAll(async () => {
    api = await TestApi.start({ env: { LOG_LEVEL: 'trace', LOG_FILE: logFile } });
    mine = (await api.createPartner('Owner')).apiKey;
    theirs = (await api.createPartner('Intruder')).apiKey;
    userId = (await api.call('POST', '/users', { apiKey: mine, body: { email: 'owned@example.com', first_name: 'Owned' } })).body.user_id;
    cardId = (
      await api.call('POST', '/credit_cards', {
        apiKey: mine,
        body: { user_id: userId, number: '5555-5555-5555-4444', verification_value: '737', month: 11, year: 2031, zip_code: '60601' },
      })
    ).body.credit_card_id;
  });
  afterAll(async () => {
    await api.close();
    logs.remove();
  });

  it("gives another partner's key 404 find_failed on every call that names the user or card", async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/users/${userId}`],
      ['PUT', `/users/${userId}`, { first_name: 'Stolen' }],
      ['POST', `/users/${userId}/access_tokens`, { expires_in: 60, scope: 'all', access: 'read' }],
      ['GET', `/credit_cards?user_id=${userId}`],
      ['GET', `/credit_cards?user_id=${userId}&count=true`],
      [
        'POST',
        '/credit_cards',
        { user_id: userId, number: '4242424242424242', verification_value: '123', month: 1, year: 2031, zip_code: '60601' },
      ],
      ['PUT', `/credit_cards/${cardId}/default`],
    ];
    for (const [method, path, body] of calls) {
      const reply = await api.call(method, path, { apiKey: theirs, body });
      expect([method, path, reply.status, reply.body.error_type]).toEqual([method, path, 404, 'find_failed']);
    }
    expect((await api.call('GET', `/users/${userId}`, { apiKey: mine })).body.user.firstname).toBe('Owned');
  });

  it('lets another partner use the same email for its own, separate user', async () => {
    const reply = await api.call('POST', '/users', { apiKey: theirs, body: { email: 'owned@example.com' } });
    expect(reply.status).toBe(200);
    expect(reply.body.user_id).not.toBe(userId);
    const byEmail = await api.call('PUT', '/api/v1/users/owned@example.com/update_by_email', {
      apiKey: theirs,
      body: { first_name: 'Theirs' },
    });
    expect(byEmail.body.user.id).toBe(reply.body.user_id);
    expect((await api.call('GET', `/users/${userId}`, { apiKey: mine })).body.user.firstname).toBe('Owned');
  });

  it('keeps no card number or CVV in the event log, any view, the payment vault or the logs', async () => {
    const secrets = ['5555555555554444', '5555-5555-5555-4444', '555555555555', '737'];
    const files = [
      join(api.dataDir, 'events.sqlite'),
      join(api.dataDir, 'events.sqlite-wal'),
      join(api.dataDir, 'payment-vault.sqlite'),
      ...readdirSync(join(api.dataDir, 'views')).map((f) => join(api.dataDir, 'views', f)),
    ];
    const texts: Array<[string, string]> = [];
    for (const file of files) {
      try {
        texts.push([file, readFileSync(file).toString('latin1')]);
      } catch {
        // a WAL file may not exist
      }
    }
    const events = new Database(join(api.dataDir, 'events.sqlite'), { readonly: true });
    const rows = events.prepare('SELECT data, metadata FROM events').all() as Array<{ data: string; metadata: string }>;
    events.close();
    texts.push(['events (decoded)', rows.map((r) => r.data + r.metadata).join('\n')]);
    const log = readFileSync(logFile, 'utf8');
    texts.push(['service.log', log]);
    expect(log).toContain('/credit_cards');
    for (const [name, text] of texts) {
      for (const secret of secrets.slice(0, 3)) expect([name, text.includes(secret)]).toEqual([name, false]);
    }
    // The CVV is three common digits: look for it only where it could be named.
    for (const [name, text] of texts) expect([name, /verification_value|"cvv"/.test(text)]).toEqual([name, false]);
    expect(rows.some((r) => r.data.includes('"last4":"4444"'))).toBe(true);
  });

  it('logs a request its client gave up on, with its id and the address redacted: while its body was coming, or while it was being served', async () => {
    const url = new URL(api.url);
    const server = api.get(HttpAdapterHost).httpAdapter.getHttpServer() as Server;
    /** Resolves once the server has the request `requestId` names: its headers, or (`whole`) its body too. */
    const received = (requestId: string, whole: boolean) =>
      new Promise<void>((resolve) => {
        const seen = (request: IncomingMessage) => {
          if (request.headers['x-request-id'] !== requestId) return;
          server.off('request', seen);
          if (whole) request.once('end', () => resolve());
          else resolve();
        };
        server.on('request', seen);
      });
    /** Sends `text`, waits for `leaveWhen`, then closes the connection without reading an answer. */
    const sendAndLeave = (text: string, leaveWhen: Promise<void>) =>
      new Promise<void>((resolve, reject) => {
        const socket = tlsConnect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
          socket.write(text);
          void leaveWhen.then(() => socket.destroy());
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    const linesOf = (requestId: string) =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => l.requestId === requestId);
    const lineOf = (requestId: string) =>
      eventually(
        async () => linesOf(requestId),
        (found) => found.length > 0,
      );
    // Headers announce a body that never comes whole: the client leaves once the server has them.
    await sendAndLeave(
      `POST /users?api_key=${mine} HTTP/1.1\r\nHost: x\r\nX-Request-Id: given-up-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":`,
      received('given-up-1', false),
    );
    // A whole request the service works on (a card's fingerprint takes tens of milliseconds) while the client leaves.
    const card = JSON.stringify({
      user_id: userId,
      number: `4111${'1'.repeat(12)}`,
      verification_value: '123',
      month: 12,
      year: 2031,
      zip_code: '60601',
    });
    await sendAndLeave(
      `POST /credit_cards?api_key=${mine} HTTP/1.1\r\nHost: x\r\nX-Request-Id: given-up-2\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(card)}\r\n\r\n${card}`,
      received('given-up-2', true),
    );
    for (const [id, path] of [
      ['given-up-1', '/users'],
      ['given-up-2', '/credit_cards'],
    ]) {
      expect(await lineOf(id)).toEqual([
        expect.objectContaining({
          msg: 'request aborted by the client',
          req: { method: 'POST', url: `${path}?api_key=[redacted]` },
          res: { statusCode: null },
        }),
      ]);
    }
  });
});
