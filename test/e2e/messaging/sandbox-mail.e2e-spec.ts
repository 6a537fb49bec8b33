import { CreatedPartner } from '@deals/accounts';
import { ManualClock, OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { CommandBus } from '@nestjs/cqrs';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { SiteClient } from '../../support/site-client';
import { SmtpSink } from '../../support/smtp-sink';
import { eventually } from '../../support/eventually';

const PASSWORD = 'a long enough passphrase';
const MEMBER = 'dev@partner.example';
const STRANGER = 'someone.else@example.org';

/**
 * A sandbox reaches no stranger: its mail (batches, the daily email, under a test clock or not) is
 * sent for real only to an address of the partner's own people, and otherwise kept in the sandbox's
 * outbox, which the partner reads with its test credentials.
 */
describe("a sandbox's mail", () => {
  const real = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let smtp: SmtpSink;
  let partner: CreatedPartner;
  let test: string;
  let site: SiteClient;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    api = await TestApi.start({ clock: real, env: { SMTP_URL: smtp.url } });
    partner = await api.createPartner('Mail tester');
    test = partner.sandbox!.apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 10, max_per_user: undefined, end_at: '2027-06-18T05:00:00Z' }]);
    const invited = await api.get(CommandBus).execute(new InviteMember(partner.partnerId, MEMBER, OPERATOR));
    await api.settle();
    site = new SiteClient(api.url);
    const link = `/partner/sign-up?token=${invited.token}`;
    await site.submit(link, '/partner/sign-up', { token: invited.token, password: PASSWORD, password_confirmation: PASSWORD });
    expect((await site.signIn(MEMBER, PASSWORD)).status).toBe(303);
    await api.settle();
  });
  afterAll(async () => {
    await api.close();
    await smtp.close();
  });

  const under = (clockId: string, method: string, path: string, body?: unknown) =>
    api.call(method, path, { apiKey: test, body, headers: { 'deals-test-clock': clockId } });
  const advance = async (clockId: string, to: string) => {
    expect((await api.call('POST', `/v1/test_clocks/${clockId}/advance`, { apiKey: test, body: { frozen_time: to } })).status).toBe(200);
    const ready = await eventually(
      () => api.call('GET', `/v1/test_clocks/${clockId}`, { apiKey: test }),
      (reply) => reply.body.test_clock.status === 'ready',
    );
    expect(ready.body.test_clock.status).toBe('ready');
  };
  const kept = () => api.call('GET', '/v1/sandbox_mail', { apiKey: test });

  it('keeps a stranger’s mail in the outbox and sends the partner’s own people theirs, batch and daily email alike', async () => {
    const clock = (await api.call('POST', '/v1/test_clocks', { apiKey: test, body: { frozen_time: '2027-03-01T10:00:00Z' } })).body
      .test_clock;
    const stranger = (await under(clock.id, 'POST', '/users', { email: STRANGER })).body.user_id;
    // The member's address, written as the partner may write it.
    const member = (await under(clock.id, 'POST', '/users', { email: MEMBER.toUpperCase() })).body.user_id;
    const batch = await under(clock.id, 'POST', '/v1/targeted_email/batches', {
      deal_id: spaDay.id,
      user_ids: [stranger, member],
      mode: 'augment',
      send_at: '2027-03-02T09:00:00Z',
    });
    expect(batch.status).toBe(201);
    for (const user of [stranger, member]) await under(clock.id, 'POST', `/users/${user}/subscriptions`, { zip: '60601' });
    await advance(clock.id, '2027-03-04T02:00:00Z');
    const delivered = await eventually(
      () => under(clock.id, 'GET', `/v1/targeted_email/batches/${batch.body.batch.id}?deal_id=${spaDay.id}`),
      (reply) => reply.body.batch.status !== 'pending',
    );
    expect(delivered.body.batch.status).toBe('processed');
    // The batch's email and the daily emails of March 1, 2 and 3: to the member for real, to the stranger only in the outbox.
    const outbox = await eventually(kept, (reply) => reply.body.sandbox_mail.length >= 4);
    await api.settle();
    expect(smtp.to(STRANGER)).toHaveLength(0);
    expect(smtp.received.filter((r) => r.to.some((to) => to.toLowerCase() === MEMBER))).toHaveLength(4);
    const mail = (await kept()).body.sandbox_mail as Array<Record<string, unknown>>;
    expect(outbox.status).toBe(200);
    expect(mail).toHaveLength(4);
    for (const item of mail) expect(item).toMatchObject({ user_id: stranger, test_clock: clock.id, id: expect.stringMatching(/^sm_/) });
    expect((await api.call('GET', '/v1/sandbox_mail?count=true', { apiKey: test })).body).toEqual({ status: 'success', count: 4 });

    const whole = await api.call('GET', `/v1/sandbox_mail/${mail[0].id as string}`, { apiKey: test });
    expect(whole.status).toBe(200);
    expect(whole.body.sandbox_mail).toMatchObject({
      to: STRANGER,
      subject: mail[0].subject,
      text: expect.any(String),
      html: expect.any(String),
    });

    // Live credentials, another partner's sandbox: nothing of it.
    expect((await api.call('GET', '/v1/sandbox_mail', { apiKey: partner.apiKey })).status).toBe(403);
    const other = await api.createPartner('Someone else');
    expect((await api.call('GET', '/v1/sandbox_mail', { apiKey: other.sandbox!.apiKey })).body.sandbox_mail).toEqual([]);
    expect((await api.call('GET', `/v1/sandbox_mail/${mail[0].id as string}`, { apiKey: other.sandbox!.apiKey })).status).toBe(404);

    // The partner site shows the same in test mode, every text escaped.
    expect((await site.get('/partner/sandbox-mail')).text).toContain('switch to test mode to see it');
    await site.submit('/partner/keys', '/partner/mode', { mode: 'test', back: '/partner/sandbox-mail' });
    const page = await site.get('/partner/sandbox-mail');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="/partner/sandbox-mail/${mail[0].id as string}"`);
    const one = await site.get(`/partner/sandbox-mail/${mail[0].id as string}`);
    expect([one.status, one.text.includes(STRANGER), one.text.includes('&lt;html')]).toEqual([200, true, true]);

    // Erased, the stranger's kept mail no longer says to whom or what: the log held them only under the user's key.
    expect((await under(clock.id, 'DELETE', `/users/${stranger}/personal_data`)).status).toBe(200);
    const erased = await api.call('GET', `/v1/sandbox_mail/${mail[0].id as string}`, { apiKey: test });
    expect(erased.body.sandbox_mail).toMatchObject({ to: null, text: null, html: null, user_id: stranger });
  });

  it("keeps the sandbox's own mail too, outside any clock", async () => {
    const before = (await kept()).body.sandbox_mail.length as number;
    const user = (await api.call('POST', '/users', { apiKey: test, body: { email: 'another.stranger@example.org' } })).body.user_id;
    real.set(new Date('2026-06-15T23:59:59Z'));
    const batch = await api.call('POST', '/v1/targeted_email/batches', {
      apiKey: test,
      body: { deal_id: spaDay.id, user_ids: [user], mode: 'augment', send_at: '2026-06-16T00:00:00Z' },
    });
    expect(batch.status).toBe(201);
    real.set(new Date('2026-06-16T00:00:01Z'));
    const outbox = await eventually(kept, (reply) => reply.body.sandbox_mail.length > before);
    expect(outbox.body.sandbox_mail[0]).toMatchObject({ user_id: user, test_clock: null });
    expect(smtp.to('another.stranger@example.org')).toHaveLength(0);
  });

  it('sends for real to a person of the partner whose address is written otherwise: compared in NFC, case-folded', async () => {
    // Invited with a decomposed `é`; the user's address has it composed, in upper case, and `ß` for `ss`.
    const invited = await api.get(CommandBus).execute(new InviteMember(partner.partnerId, 'jose\u0301.strasse@partner.example', OPERATOR));
    await api.settle();
    const token = invited.token;
    await new SiteClient(api.url).submit(`/partner/sign-up?token=${token}`, '/partner/sign-up', {
      token,
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    await api.settle();
    const address = 'JOS\u00c9.STRA\u00dfE@partner.example';
    const user = (await api.call('POST', '/users', { apiKey: test, body: { email: address } })).body.user_id;
    const before = { sent: smtp.received.length, kept: (await kept()).body.sandbox_mail.length as number };
    real.set(new Date('2026-06-16T23:59:59Z'));
    const batch = await api.call('POST', '/v1/targeted_email/batches', {
      apiKey: test,
      body: { deal_id: spaDay.id, user_ids: [user], mode: 'augment', send_at: '2026-06-17T00:00:00Z' },
    });
    expect(batch.status).toBe(201);
    real.set(new Date('2026-06-17T00:00:01Z'));
    expect(await smtp.whenReceived(before.sent + 1)).toBe(true);
    expect(smtp.to(address)).toHaveLength(1);
    expect((await kept()).body.sandbox_mail).toHaveLength(before.kept);
  });
});
