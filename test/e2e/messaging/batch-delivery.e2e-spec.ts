import { RegisterUser } from '@deals/accounts';
import { EventStore, ManualClock, ScheduledJob, Scheduler } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { SmtpSink } from '../../support/smtp-sink';

const longSpa = { ...spaDay, id: 'chicago-spa-season', start_at: '2026-06-01T00:00:00Z', end_at: '2026-12-31T00:00:00Z' };

describe('batch delivery at send_at, over SMTP to a real server', () => {
  // States awaited up to a ceiling that means hung (eventually's), below each test's own.
  jest.setTimeout(60_000);
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let sink: SmtpSink;
  let api: TestApi;
  let apiKey: string;
  let partnerId: string;
  let armed: jest.SpyInstance<Promise<void>, [ScheduledJob]>;
  let day = 1;
  beforeAll(async () => {
    sink = await SmtpSink.start();
    api = await TestApi.start({
      clock,
      env: { SMTP_URL: sink.url, MAIL_FROM: 'Deals <deals@example.com>', MAIL_REPLY_TO: 'help@example.com' },
    });
    ({ apiKey, partnerId } = await api.createPartner());
    await api.importRegions([chicago]);
    await api.importDeals([longSpa]);
    armed = jest.spyOn(api.get(Scheduler), 'schedule');
  });
  afterAll(async () => {
    armed?.mockRestore();
    await api?.close();
    await sink?.close();
  });

  const user = async (email: string) => (await api.call('POST', '/users', { apiKey, body: { email } })).body.user_id as string;
  /** A user made through the command bus, as POST /users makes one. */
  const registered = async (email: string) => {
    const caller = { partnerId, actor: `partner:${partnerId}` };
    return (await api.get(CommandBus).execute(new RegisterUser({ profile: { email }, sessionId: null }, true, caller))).userId;
  };
  /** A batch due one second from now on a day of its own; its job armed for its send_at. */
  const dueBatch = async (userIds: string[], mode = 'augment') => {
    const d = String(day++).padStart(2, '0');
    clock.set(`2026-07-${d}T23:59:59Z`);
    const sendAt = `2026-07-${String(day).padStart(2, '0')}T00:00:00Z`;
    const reply = await api.call('POST', '/v1/targeted_email/batches', {
      apiKey,
      body: { deal_id: longSpa.id, user_ids: userIds, mode, send_at: sendAt },
    });
    expect(reply.status).toBe(201);
    const id = reply.body.batch.id as string;
    expect(jobOf(id)).toMatchObject({ kind: 'deliver-batch', runAt: new Date(sendAt) });
    return id;
  };
  /** The delivery job the batch's creation armed. */
  const jobOf = (id: string) => armed.mock.calls.map(([job]) => job).find((job) => job.id === `deliver-batch-${id}`);
  /**
   * Moves the clock past the batch's send_at and runs its job now, as armed at its creation: its
   * timer counts a second of real time from then, which the clock's move does not shorten.
   */
  const settle = async (id: string) => {
    clock.set(`2026-07-${String(day).padStart(2, '0')}T00:00:02Z`);
    await api.get(Scheduler).schedule({ ...jobOf(id)!, runAt: clock.now() });
  };
  /** Whether the scheduler still holds the batch's job: armed, due or running. */
  const held = async (id: string) =>
    (await api.get(Scheduler).list(1000)).some((job) => job.id === `deliver-batch-${id}` && job.state !== 'failed');
  const status = async (id: string) =>
    (await api.call('GET', `/v1/targeted_email/batches/${id}?deal_id=${longSpa.id}`, { apiKey })).body.batch.status;
  /** The batch's status once it is one of `wanted` (the last one read if it never is, within a ceiling that means hung). */
  const until = (id: string, wanted: string[], ceilingMs?: number) =>
    eventually(
      () => status(id),
      (s) => wanted.includes(s),
      ceilingMs,
    );

  it('sends the deal to each live user at send_at: one multipart message each, with the deal and the headers; processed', async () => {
    const [ann, bob, gone] = [await user('ann@example.com'), await user('bob@example.com'), await user('gone@example.com')];
    const id = await dueBatch([ann, bob, gone]);
    await api.call('PUT', `/users/${gone}`, { apiKey, body: { is_deleted: true } });
    await settle(id);
    expect(await until(id, ['processed', 'failed'])).toBe('processed');
    expect(sink.to('ann@example.com')).toHaveLength(1);
    expect(sink.to('bob@example.com')).toHaveLength(1);
    expect(sink.to('gone@example.com')).toHaveLength(0);
    const { parsed, raw } = sink.to('ann@example.com')[0];
    expect(parsed.subject).toBe(longSpa.title);
    expect(parsed.from?.text).toBe('"Deals" <deals@example.com>');
    expect(parsed.replyTo?.text).toBe('help@example.com');
    expect(parsed.messageId).toBe(`<batch-${id}.${ann}@deals-service>`);
    expect(raw).toMatch(/Content-Type: multipart\/alternative/);
    expect(parsed.text).toContain('$49.00 (a $120.00 value)');
    expect(parsed.text).toContain('See the deal: https://deals.example.com/deals/chicago-spa-season');
    expect(parsed.html).toContain('<img src="https://deals.example.com/images/deals/chicago-spa-day.jpg"');
    expect(parsed.html).toContain('Limit 2 per person.');
    const events = (await api.get(EventStore).readStream(`batch-${id}`)).map((e) => [e.type, (e.data as { userId?: string }).userId]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['BatchRecipientSent', ann],
        ['BatchRecipientSent', bob],
        ['BatchRecipientSkipped', gone],
      ]),
    );
    expect(events[events.length - 1][0]).toBe('BatchDelivered');
  });

  it('sends nothing for a cancelled batch, even once its time has come', async () => {
    const cara = await user('cara@example.com');
    const id = await dueBatch([cara]);
    expect((await api.call('DELETE', `/v1/targeted_email/batches/${id}?deal_id=${longSpa.id}`, { apiKey })).body.batch.status).toBe(
      'cancelled',
    );
    // The cancel took its job off the scheduler; one a scheduler kept all the same finds the batch cancelled.
    expect(await held(id)).toBe(false);
    await settle(id);
    expect(
      await eventually(
        () => held(id),
        (still) => !still,
      ),
    ).toBe(false);
    expect(sink.to('cara@example.com')).toHaveLength(0);
    expect(await status(id)).toBe('cancelled');
    expect(await api.get(EventStore).readStream(`batch-${id}`)).toEqual([]);
  });

  it('marks the batch failed when the server refuses a recipient for good (550) or again and again (450); the others are sent', async () => {
    const [dee, eve, fay] = [await user('dee@example.com'), await user('eve@example.com'), await user('fay@example.com')];
    sink.refuse.set('eve@example.com', 550);
    sink.refuse.set('fay@example.com', 450);
    const id = await dueBatch([dee, eve, fay]);
    await settle(id);
    expect(await until(id, ['processed', 'failed'])).toBe('failed');
    expect(sink.to('dee@example.com')).toHaveLength(1);
    const failed = (await api.get(EventStore).readStream(`batch-${id}`))
      .filter((e) => e.type === 'BatchRecipientFailed')
      .map((e) => e.data as { userId: string; permanent: boolean; attempts: number });
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ userId: eve, permanent: true, attempts: 1 }),
        expect.objectContaining({ userId: fay, permanent: false, attempts: 3 }),
      ]),
    );
    // The server's refusal quoted the address: the batch's events keep its reason without it.
    const events = JSON.stringify(await api.get(EventStore).readStream(`batch-${id}`));
    expect(events).toContain('No such mailbox');
    expect(events).not.toMatch(/eve@example\.com|fay@example\.com/);
  });

  it('advertises no deal that went off sale before send_at: its recipients are skipped, nothing is sent', async () => {
    const gil = await user('gil@example.com');
    const id = await dueBatch([gil]);
    await api.importDeals([{ ...longSpa, state: 'paused' }]);
    await settle(id);
    try {
      expect(await until(id, ['processed', 'failed'])).toBe('processed');
      expect(sink.to('gil@example.com')).toHaveLength(0);
      const [skipped] = (await api.get(EventStore).readStream(`batch-${id}`)).filter((e) => e.type === 'BatchRecipientSkipped');
      expect(skipped.data).toMatchObject({ userId: gil, reason: 'the deal is not on sale (paused)' });
    } finally {
      await api.importDeals([longSpa]);
    }
  });

  it('delivers 300 recipients over a few pooled connections', async () => {
    // Made through the command bus, as POST /users makes them: the delivery is what is tested here, not that call.
    const ids = await Promise.all(Array.from({ length: 300 }, (_, i) => registered(`many${i}@example.com`)));
    await api.settle();
    const before = sink.connections;
    const id = await dueBatch(ids);
    await settle(id);
    expect(await until(id, ['processed', 'failed'], 90_000)).toBe('processed');
    expect(ids.every((_, i) => sink.to(`many${i}@example.com`).length === 1)).toBe(true);
    expect(sink.connections - before).toBeLessThanOrEqual(5);
  }, 120_000);
});
