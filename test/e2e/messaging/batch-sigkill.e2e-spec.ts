import { RegisterUser } from '@deals/accounts';
import { ManualClock } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { TestApi } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { SmtpSink } from '../../support/smtp-sink';
import { tempDir } from '../../support/temp-dir';

const RECIPIENTS = 2000;
/** Messages the delivery has in flight at once: those under way at the kill may go twice (README). */
const IN_FLIGHT = 10;
/** Messages kept before the kill: the sink answers no more from then on, so that the kill comes in the middle whatever the machine's speed. */
const AT_KILL = 600;
const DAY_MS = 86_400_000;

/**
 * Reads until `check` holds, a tenth of a second apart (not to take the process's time from the
 * delivery), up to a ceiling that means hung; the last value read.
 */
async function polled<T>(read: () => Promise<T>, check: (value: T) => boolean, ceilingMs = 240_000): Promise<T> {
  const deadline = Date.now() + ceilingMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A 2,000-recipient batch killed (SIGKILL) in the middle of its delivery, then started again on the
 * same data: every user has its email, and only those under way at the kill may have it twice.
 */
describe('a SIGKILL in the middle of a batch delivery', () => {
  // Two starts and the delivery of 2,000 messages, on a machine other suites load too.
  jest.setTimeout(300_000);
  const dir = tempDir('batch-sigkill');
  let sink: SmtpSink;
  beforeAll(async () => (sink = await SmtpSink.start()));
  afterAll(async () => {
    await sink.close();
    dir.remove();
  });

  it('resumes where it stopped: everyone gets the email, no one twice but those under way', async () => {
    // The batch is made on a clock of the day before its send_at, which has come by the real clock when the process starts.
    const sendAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const clock = new ManualClock(new Date(sendAt.getTime() - DAY_MS));
    const setup = await TestApi.start({ clock, dataDir: dir.path, env: { SMTP_URL: sink.url } });
    const { apiKey, partnerId } = await setup.createPartner();
    await setup.importRegions([chicago]);
    const deal = {
      ...spaDay,
      id: 'chicago-spa-kill',
      start_at: new Date(sendAt.getTime() - 3 * DAY_MS).toISOString(),
      end_at: new Date(sendAt.getTime() + 7 * DAY_MS).toISOString(),
    };
    await setup.importDeals([deal]);
    // Made through the command bus at once, as POST /users makes them: the delivery is what is tested here, not that call.
    const caller = { partnerId, actor: `partner:${partnerId}` };
    const register = async (i: number) =>
      (await setup.get(CommandBus).execute(new RegisterUser({ profile: { email: `k${i}@example.com` }, sessionId: null }, true, caller)))
        .userId;
    const users = await Promise.all(Array.from({ length: RECIPIENTS }, (_, i) => register(i)));
    await setup.settle();
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
    sink.stallAt = AT_KILL;
    let api = await ApiProcess.start(dir.path, port, env);
    // The batches are due at its start; it is killed once a good part has gone out, the rest held by the sink.
    expect(await sink.whenReceived(AT_KILL, 120_000)).toBe(true);
    await api.kill();
    const atKill = sink.received.length;
    expect(atKill).toBeLessThan(RECIPIENTS);

    sink.stallAt = Infinity;
    api = await ApiProcess.start(dir.path, port, env);
    try {
      const status = async (id: string) =>
        (await api.call('GET', `/v1/targeted_email/batches/${id}?deal_id=${deal.id}&api_key=${apiKey}`)).body.batch.status as string;
      const ended = (status: string) => status === 'processed' || status === 'failed';
      for (const id of batches) expect([id, await polled(() => status(id), ended)]).toEqual([id, 'processed']);
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
