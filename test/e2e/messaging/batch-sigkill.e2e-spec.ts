import { ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { SmtpSink } from '../../support/smtp-sink';
import { tempDir } from '../../support/temp-dir';

const RECIPIENTS = 2000;
/** Messages the delivery has in flight at once: those under way at the kill may go twice (README). */
const IN_FLIGHT = 10;
const DAY_MS = 86_400_000;

/**
 * A 2,000-recipient batch killed (SIGKILL) in the middle of its delivery, then started again on the
 * same data: every user has its email, and only those under way at the kill may have it twice.
 */
describe('a SIGKILL in the middle of a batch delivery', () => {
  // 2,000 users made one by one, two starts and a delivery: about 25 s on an idle machine.
  jest.setTimeout(300_000);
  const dir = tempDir('batch-sigkill');
  let sink: SmtpSink;
  beforeAll(async () => (sink = await SmtpSink.start()));
  afterAll(async () => {
    await sink.close();
    dir.remove();
  });

  it('resumes where it stopped: everyone gets the email, no one twice but those under way', async () => {
    // The batch is made on a clock of the day before its send_at, which is a few seconds from now (the real clock's).
    const sendAt = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000);
    const clock = new ManualClock(new Date(sendAt.getTime() - DAY_MS));
    const setup = await TestApi.start({ clock, dataDir: dir.path, env: { SMTP_URL: sink.url } });
    const { apiKey } = await setup.createPartner();
    await setup.importRegions([chicago]);
    const deal = {
      ...spaDay,
      id: 'chicago-spa-kill',
      start_at: new Date(sendAt.getTime() - 3 * DAY_MS).toISOString(),
      end_at: new Date(sendAt.getTime() + 7 * DAY_MS).toISOString(),
    };
    await setup.importDeals([deal]);
    const users: string[] = [];
    for (let i = 0; i < RECIPIENTS; i++)
      users.push((await setup.call('POST', '/users', { apiKey, body: { email: `k${i}@example.com` } })).body.user_id);
    const batches: string[] = [];
    for (let i = 0; i < RECIPIENTS; i += 1000) {
      const reply = await setup.call('POST', '/v1/targeted_email/batches', {
        apiKey,
        body: { deal_id: deal.id, user_ids: users.slice(i, i + 1000), mode: 'augment', send_at: sendAt.toISOString() },
      });
      expect(reply.status).toBe(201);
      batches.push(reply.body.batch.id);
    }
    await setup.stop();

    const port = await freePort();
    const env = { SMTP_URL: sink.url };
    let api = await ApiProcess.start(dir.path, port, env);
    // The batches are due in a moment; the process is killed once a good part has gone out.
    for (let i = 0; sink.received.length < 600; i++) {
      if (i > 600) throw new Error(`only ${sink.received.length} messages arrived`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await api.kill();
    const atKill = sink.received.length;
    expect(atKill).toBeLessThan(RECIPIENTS);

    api = await ApiProcess.start(dir.path, port, env);
    try {
      for (const id of batches) {
        for (let i = 0; ; i++) {
          const status = (await api.call('GET', `/v1/targeted_email/batches/${id}?deal_id=${deal.id}&api_key=${apiKey}`)).body.batch.status;
          if (status === 'processed') break;
          if (status === 'failed' || i > 1200) throw new Error(`batch ${id}: ${status}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      await api.stop();
    }
    const counts = new Map<string, number>();
    for (const r of sink.received) for (const to of r.to) counts.set(to, (counts.get(to) ?? 0) + 1);
    const missing = users.map((_, i) => `k${i}@example.com`).filter((address) => !counts.has(address));
    const twice = [...counts.values()].filter((n) => n > 1).length;
    expect(missing).toEqual([]);
    expect([...counts.values()].every((n) => n <= 2)).toBe(true);
    expect(twice).toBeLessThanOrEqual(IN_FLIGHT * batches.length);
  });
});
