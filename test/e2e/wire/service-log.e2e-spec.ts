import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestApi } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { tempDir } from '../../support/temp-dir';

/** The simulated processor's card that fails with a processor error (README), built rather than written out. */
const FAILING_CARD = ['4000', '0000', '0000', '0119'].join('');

describe('the service log: a 5xx is logged once, under its request id', () => {
  const logs = tempDir('service-log');
  const logFile = join(logs.path, 'service.log');
  let api: TestApi;
  afterAll(async () => {
    await api?.close();
    logs.remove();
  });

  it("logs a processor failure (502) as a warning naming its error type, with the request's id, without a stack", async () => {
    api = await TestApi.start({ env: { LOG_LEVEL: 'info', LOG_FILE: logFile } });
    const apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 10 }]);
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'failing@example.com' } })).body.user_id;
    const cardId = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: userId, number: FAILING_CARD, verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const reply = await api.call('POST', '/purchases', {
      apiKey,
      headers: { 'x-request-id': 'req-failing-charge' },
      body: { deal_id: spaDay.id, quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 },
    });
    expect([reply.status, reply.body.error_type]).toEqual([502, 'payment_failed']);
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const mine = lines.filter((line) => line.requestId === 'req-failing-charge');
    expect(mine).toEqual([
      expect.objectContaining({ level: 40, errorType: 'payment_failed', status: 502 }),
      expect.objectContaining({ level: 30, msg: 'request completed', res: { statusCode: 502 } }),
    ]);
    expect(mine[0]).not.toHaveProperty('err');
    expect(lines.filter((line) => line.context === 'ErrorFilter')).toEqual([]);
    expect(readFileSync(logFile, 'utf8')).not.toContain(FAILING_CARD);
  });

  it("writes a line for a request refused before routing, its key redacted; and not Nest's listing of modules and routes", async () => {
    const key = `dk_${'Zz9'.repeat(11)}`;
    const refused = await api.call('GET', `/deals/%?api_key=${key}`, { headers: { 'x-request-id': 'req-malformed' } });
    expect(refused.status).toBe(400);
    const text = readFileSync(logFile, 'utf8');
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => line.requestId === 'req-malformed')).toEqual([
      expect.objectContaining({ level: 30, req: { method: 'GET', url: '/deals/…?api_key=…' }, res: { statusCode: 400 } }),
    ]);
    expect(text).not.toContain(key);
    expect(lines.filter((line) => ['RouterExplorer', 'RoutesResolver', 'InstanceLoader'].includes(String(line.context)))).toEqual([]);
  });
});

describe("the API process's stdout without LOG_FILE", () => {
  const dir = tempDir('stdout-json');
  let api: ApiProcess | undefined;
  afterAll(async () => {
    await api?.stop();
    dir.remove();
  });

  it('is JSON lines only: the listening line and the demo credentials are log lines too', async () => {
    api = await ApiProcess.start(dir.path, await freePort(), { LOG_LEVEL: 'info', LOG_FILE: '', DEMO_DATA: 'on' }, { captureStdout: true });
    expect((await api.call('GET', '/health')).status).toBe(200);
    expect((await api.call('GET', '/api/v1/regions')).status).toBe(401);
    await api.stop();
    const lines = (await api.stdout()).split('\n').filter(Boolean);
    const notJson = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== 'object';
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const messages = lines.map((line) => JSON.parse(line) as { msg?: string; file?: string });
    expect(messages.filter((line) => /^deals API listening on https:\/\/localhost:\d+ /.test(line.msg ?? ''))).toHaveLength(1);
    const demo = JSON.parse(readFileSync(join(dir.path, 'demo-partner.json'), 'utf8'));
    const notice = messages.filter((line) => line.msg?.startsWith('demo partner created'));
    expect(notice).toEqual([expect.objectContaining({ level: 30, file: join(dir.path, 'demo-partner.json') })]);
    // The log names the file; the secrets themselves never reach it.
    for (const secret of [demo.api_key, demo.password]) expect(lines.join('\n')).not.toContain(secret);
  }, 90_000);
});
