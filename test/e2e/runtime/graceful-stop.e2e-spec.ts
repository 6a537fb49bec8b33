import { writeFileSync } from 'node:fs';
import { connect, TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { runCli } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { polled } from '../../support/polled';
import { tempDir } from '../../support/temp-dir';

const SLOW_CARD = '4000000000000259';

/**
 * A keep-alive connection that has had one answer and then sits idle: resolves with how it ended
 * (`end`: the server closed it cleanly, a FIN after its last answer; `reset`: ECONNRESET or
 * another error).
 */
async function idleKeepAlive(port: number): Promise<{ ended: Promise<'end' | 'reset'> }> {
  const socket: TLSSocket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  let received = '';
  let failed = false;
  socket.on('error', () => (failed = true));
  const ended = new Promise<'end' | 'reset'>((resolve) => socket.on('close', () => resolve(failed ? 'reset' : 'end')));
  await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
  socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
  await new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (/\r\n\r\n[\s\S]*\}/.test(received)) resolve();
    }),
  );
  if (!received.startsWith('HTTP/1.1 200')) throw new Error(`unexpected answer: ${received}`);
  return { ended };
}

/** SIGTERM while a purchase is being charged: it is answered, whole, and the process exits 0. */
describe('a graceful stop (SIGTERM)', () => {
  const dir = tempDir('graceful');
  afterAll(() => dir.remove());

  it('answers the purchase in its charge with its coupons, exits 0, and the next start has nothing to recover', async () => {
    const partner = JSON.parse((await runCli(dir.path, ['partners:create', '--name', 'Stopping', '--json'])).stdout);
    const key = `?api_key=${partner.api_key}`;
    writeFileSync(join(dir.path, 'regions.json'), JSON.stringify([chicago]));
    const [start, end] = [new Date(Date.now() - 86_400_000).toISOString(), new Date(Date.now() + 7 * 86_400_000).toISOString()];
    writeFileSync(join(dir.path, 'deals.json'), JSON.stringify([{ ...spaDay, quantity: 5, start_at: start, end_at: end }]));
    expect((await runCli(dir.path, ['regions:import', join(dir.path, 'regions.json')])).code).toBe(0);
    expect((await runCli(dir.path, ['deals:import', join(dir.path, 'deals.json')])).code).toBe(0);
    const port = await freePort();
    let api = await ApiProcess.start(dir.path, port, { SLOW_CARD_MS: '2000' });
    const user = (await api.call('POST', `/users${key}`, { email: 'slow@example.com' })).body.user_id;
    const card = (
      await api.call('POST', `/credit_cards${key}`, {
        user_id: user,
        number: SLOW_CARD,
        verification_value: '123',
        month: 12,
        year: 2030,
        zip_code: '60601',
      })
    ).body.credit_card_id;
    const buying = api.call('POST', `/purchases${key}`, {
      deal_id: spaDay.id,
      quantity: 1,
      user_id: user,
      credit_card_id: card,
      expected_price_per_unit: spaDay.current_price,
    });
    const idle = await idleKeepAlive(port);
    // Under way (the slow card's charge takes 2 s): its unit is held, which the deal's count shows.
    const left = async () => (await api.call('GET', `/deals/${spaDay.id}${key}`)).body.deal.num_left;
    expect(await polled(left, (n) => n === 4, 30_000)).toBe(4);
    const stopped = api.stop();
    const bought = await buying;
    await stopped;
    // The idle keep-alive connection was closed cleanly, not reset.
    expect(await idle.ended).toBe('end');
    expect(bought.status).toBe(200);
    expect(bought.body.purchase).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled' });
    expect(bought.body.purchase.coupons).toHaveLength(1);
    expect(api.exitCode).toBe(0);

    api = await ApiProcess.start(dir.path, port, { LOG_LEVEL: 'info' }, { captureStdout: true });
    try {
      expect((await api.call('GET', `/purchases/${bought.body.purchase.id}${key}`)).body.purchase.fulfillment_state).toBe('fulfilled');
      expect((await api.call('GET', `/deals/${spaDay.id}${key}`)).body.deal.num_left).toBe(4);
    } finally {
      await api.stop();
    }
    expect(await api.stdout()).not.toMatch(/recovered purchase|released .*abandoned/);
  }, 180_000);
});
