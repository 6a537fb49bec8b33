import { ManualClock, OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { CommandBus } from '@nestjs/cqrs';
import { runCli, TestApi } from '../../support/api-harness';
import { inputValue, SiteClient } from '../../support/site-client';
import { tempDir } from '../../support/temp-dir';

const PASSWORD = 'a long enough passphrase';

/**
 * The partner site's personal-data page: a member erases a user, sees the erasures the partner has
 * not acknowledged (an operator's and a `DELETE` call's too), and acknowledges each once its own
 * copies are gone; another partner's users are neither erased nor listed.
 */
describe('the partner site: erasures of personal data', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const dir = tempDir('site-erasures');
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;
  let client: SiteClient;

  beforeAll(async () => {
    api = await TestApi.start({ clock, dataDir: dir.path });
    partner = await api.createPartner('Seller');
    const invited = await api.get(CommandBus).execute(new InviteMember(partner.partnerId, 'privacy@example.com', OPERATOR));
    await api.settle();
    client = new SiteClient(api.url);
    const link = `/partner/sign-up?token=${invited.token}`;
    await client.submit(link, '/partner/sign-up', { token: invited.token, password: PASSWORD, password_confirmation: PASSWORD });
    expect((await client.signIn('privacy@example.com', PASSWORD)).status).toBe(303);
  });
  afterAll(async () => {
    await api?.stop();
    dir.remove();
  });

  const newUser = async (email: string, apiKey = partner.apiKey) =>
    (await api.call('POST', '/users', { apiKey, body: { email } })).body.user_id as string;

  it('erases a user from its form, only with the confirmation, and only the partner’s own', async () => {
    const userId = await newUser('erase.me@example.com');
    const other = await api.createPartner('Another');
    const theirs = await newUser('not.yours@example.com', other.apiKey);

    const page = await client.get('/partner/erasures');
    expect(page.status).toBe(200);
    expect(page.text).toContain('None: every erasure is acknowledged.');
    const unconfirmed = await client.submit('/partner/erasures', '/partner/erasures', { user_id: userId });
    expect([unconfirmed.status, unconfirmed.text.includes('confirm that the erasure cannot be undone')]).toEqual([422, true]);
    expect((await api.call('GET', `/users/${userId}`, { apiKey: partner.apiKey })).status).toBe(200);
    const notOurs = await client.submit('/partner/erasures', '/partner/erasures', { user_id: theirs, confirm: 'on' });
    expect([notOurs.status, notOurs.text.includes('names no user of yours')]).toEqual([404, true]);
    expect((await api.call('GET', `/users/${theirs}`, { apiKey: other.apiKey })).status).toBe(200);

    const erased = await client.submit('/partner/erasures', '/partner/erasures', { user_id: userId, confirm: 'on' });
    expect([erased.status, erased.headers.location]).toEqual([303, '/partner/erasures?done=erased']);
    const erasedUser = await api.call('GET', `/users/${userId}`, { apiKey: partner.apiKey });
    expect(erasedUser.body.error_msg).toMatch(/personal data was erased/);
    const listed = await client.get('/partner/erasures?done=erased');
    expect(listed.text).toMatch(/personal data is erased\. Erase your own copies/);
    expect(listed.text).toContain(`Acknowledge the erasure of ${userId}`);
    expect(listed.text).not.toContain(theirs);
  });

  it('lists the erasures asked through the API and by an operator until each is acknowledged', async () => {
    const byApi = await newUser('api.erased@example.com');
    expect((await api.call('DELETE', `/users/${byApi}/personal_data`, { apiKey: partner.apiKey })).status).toBe(200);
    const byOperator = await newUser('operator.erased@example.com');
    await api.stop();
    expect((await runCli(dir.path, ['users:erase', byOperator])).code).toBe(0);
    api = await TestApi.start({ clock, dataDir: dir.path });
    client = new SiteClient(api.url);
    expect((await client.signIn('privacy@example.com', PASSWORD)).status).toBe(303);

    const page = await client.get('/partner/erasures');
    expect(page.text).toMatch(/Erasures to acknowledge \(3\)/);
    expect(page.text).toContain('the service’s operator');
    for (const userId of [byApi, byOperator]) {
      const done = await client.submit('/partner/erasures', `/partner/erasures/${userId}/acknowledge`, {});
      expect([done.status, done.headers.location]).toEqual([303, '/partner/erasures?done=acknowledged']);
    }
    const after = await client.get('/partner/erasures');
    expect(after.text).toMatch(/Erasures to acknowledge \(1\)/);
    expect(after.text).toContain('Acknowledged, the latest erased first');
    // Acknowledging again changes nothing; a user never erased has nothing to acknowledge.
    expect((await client.submit('/partner/erasures', `/partner/erasures/${byApi}/acknowledge`, {})).status).toBe(303);
    const live = await newUser('still.here@example.com');
    const nothing = await client.post(`/partner/erasures/${live}/acknowledge`, { _csrf: inputValue(after.text, '_csrf')! });
    expect(nothing.status).toBe(404);
  }, 60_000);
});
