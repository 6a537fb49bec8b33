import { EventStore, ManualClock, OPERATOR, PERSONAL_ENVELOPE, storedLog } from '@deals/kernel';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InviteMember, memberStream, SITE_POLICY } from '@deals/partner-site';
import { UserWrites } from '@deals/accounts';
import { CommandBus } from '@nestjs/cqrs';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { rateLimitFields } from '../../support/rate-limit-fields';
import { postInPieces } from '../../support/piecewise-post';
import { inputValue, PostedFrom, SiteClient, totpAt } from '../../support/site-client';

const PASSWORD = 'a long and private passphrase';

/** The most checks of one account's secrets that can run in `ms`: the free ones, then one a wait (each twice the last), however they are sent. */
const mostChecked = (ms: number) => 3 + Math.floor(Math.log2(ms / 1000 + 2));

describe('the partner site', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;

  const invite = async (email: string, partnerId = partner.partnerId) => {
    const invited = await api.get(CommandBus).execute(new InviteMember(partnerId, email, OPERATOR));
    await api.settle();
    return `/partner/sign-up?token=${invited.token}`;
  };
  /** A person invited, signed up and signed in: their client. */
  const member = async (email: string, partnerId = partner.partnerId) => {
    const client = new SiteClient(api.url);
    const link = await invite(email, partnerId);
    const signedUp = await client.submit(link, '/partner/sign-up', {
      token: new URL(link, api.url).searchParams.get('token')!,
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(signedUp.status).toBe(303);
    expect((await client.signIn(email, PASSWORD)).status).toBe(303);
    return client;
  };

  /** The events of the member with this email. */
  const streamOf = async (email: string) => {
    const events = await api.get(EventStore).readAll({ after: null, maxCount: 100_000 });
    const invited = events.find((e) => e.type === 'MemberInvited' && (e.data as { email: string }).email === email)!;
    return api.get(EventStore).readStream(memberStream((invited.data as { memberId: string }).memberId));
  };
  /** A signed-in client's two-step set-up form: its secret, and a post of it with a password and a code. */
  const totpForm = async (client: SiteClient) => {
    const setup = await client.submit('/partner/security', '/partner/security/totp/start', {});
    const secret = /Key: <code>([A-Z2-7]+)<\/code>/.exec(setup.text)![1];
    const fields = { sealed: inputValue(setup.text, 'sealed')!, _csrf: inputValue(setup.text, '_csrf')! };
    const enrol = (password: string, code: string) => client.post('/partner/security/totp', { ...fields, password, code });
    return { secret, enrol };
  };

  const logFile = join(tmpdir(), `partner-site-${process.pid}-${Date.now()}.log`);

  beforeAll(async () => {
    api = await TestApi.start({ clock, env: { LOG_LEVEL: 'info', LOG_FILE: logFile } });
    partner = await api.createPartner('Site partner');
  });
  afterAll(async () => {
    await api.close();
    rmSync(logFile, { force: true });
  });
  afterEach(() => clock.set('2026-06-15T12:00:00Z'));

  it('invite, sign up once, sign in: HttpOnly, Secure, SameSite=Strict cookies for /partner, and the headers of a bank', async () => {
    const client = new SiteClient(api.url);
    const link = await invite('ada@example.com');
    const token = new URL(link, api.url).searchParams.get('token')!;
    const form = await client.get(link);
    expect(form.status).toBe(200);
    expect(form.text).toContain('ada@example.com');
    const weak = await client.post('/partner/sign-up', {
      token,
      password: 'ada@example.com-x',
      password_confirmation: 'ada@example.com-x',
      _csrf: inputValue(form.text, '_csrf')!,
    });
    expect(weak.status).toBe(422);
    const signedUp = await client.post('/partner/sign-up', {
      token,
      password: PASSWORD,
      password_confirmation: PASSWORD,
      _csrf: inputValue(form.text, '_csrf')!,
    });
    expect(signedUp).toMatchObject({ status: 303, location: '/partner/sign-in?signed-up=1' });
    // The link is good once.
    expect((await client.get(link)).status).toBe(422);
    const again = await client.post('/partner/sign-up', {
      token,
      password: PASSWORD,
      password_confirmation: PASSWORD,
      _csrf: inputValue(form.text, '_csrf')!,
    });
    expect(again.status).toBe(422);

    const signedIn = await client.signIn('Ada@Example.com', PASSWORD);
    expect(signedIn).toMatchObject({ status: 303, location: '/partner/keys' });
    const session = signedIn.cookies.find((c) => c.startsWith('partner_session='))!;
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/; SameSite=Strict/);
    expect(session).toMatch(/; Path=\/partner(;|$)/);
    const keys = await client.get('/partner/keys');
    expect(keys.status).toBe(200);
    expect(keys.text).toContain('<h1>API keys</h1>');
    expect(keys.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(keys.headers).toMatchObject({
      'referrer-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    expect(keys.text).not.toMatch(/<script/i);
    // The API's credentials open nothing here, and the site's cookie opens nothing of the API.
    expect((await new SiteClient(api.url).get(`/partner/keys?api_key=${partner.apiKey}`)).status).toBe(303);
    expect((await api.call('GET', '/v1/deals')).status).toBe(401);
  });

  it('signs in with a TOTP second factor once enrolled; a code is good once', async () => {
    const client = await member('totp@example.com');
    const setup = await client.submit('/partner/security', '/partner/security/totp/start', {});
    expect(setup.status).toBe(200);
    const secret = /Key: <code>([A-Z2-7]+)<\/code>/.exec(setup.text)![1];
    const wrong = await client.post('/partner/security/totp', {
      sealed: inputValue(setup.text, 'sealed')!,
      code: '000000',
      password: PASSWORD,
      _csrf: inputValue(setup.text, '_csrf')!,
    });
    expect(wrong.status).toBe(422);
    // A session left open is not enough: the password is asked again.
    const noPassword = await client.post('/partner/security/totp', {
      sealed: inputValue(setup.text, 'sealed')!,
      code: await totpAt(secret, clock.now()),
      password: 'someone else at an open laptop',
      _csrf: inputValue(setup.text, '_csrf')!,
    });
    expect(noPassword.status).toBe(422);
    expect(noPassword.text).toContain('Your password or the code was not accepted');
    const enrolled = await client.post('/partner/security/totp', {
      sealed: inputValue(setup.text, 'sealed')!,
      code: await totpAt(secret, clock.now()),
      password: PASSWORD,
      _csrf: inputValue(setup.text, '_csrf')!,
    });
    expect(enrolled).toMatchObject({ status: 303, location: '/partner/security?done=totp' });
    // The secret is sealed in the log, never in clear.
    const events = await api.get(EventStore).readAll({ after: null, maxCount: 10_000 });
    expect(JSON.stringify(events)).not.toContain(secret);

    const other = new SiteClient(api.url);
    expect((await other.signIn('totp@example.com', PASSWORD)).status).toBe(401);
    clock.advance(30_000);
    const code = await totpAt(secret, clock.now());
    expect(await other.signIn('totp@example.com', PASSWORD, code)).toMatchObject({ status: 303, location: '/partner/keys' });
    expect((await new SiteClient(api.url).signIn('totp@example.com', PASSWORD, code)).status).toBe(401);
  });

  it('throttles wrong passwords with 429 and a growing Retry-After', async () => {
    await member('slow@example.com');
    const client = new SiteClient(api.url);
    for (let i = 0; i < 3; i++) expect((await client.signIn('slow@example.com', 'not the password at all')).status).toBe(401);
    const first = await client.signIn('slow@example.com', 'not the password at all');
    expect(first.status).toBe(429);
    // A wait runs from its attempt's admission: what is left once the password was checked (a second less on a busy machine).
    expect(first.headers['retry-after']).toMatch(/^[12]$/);
    // Refused while it waits, even with the right password.
    expect((await client.signIn('slow@example.com', PASSWORD)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const second = await client.signIn('slow@example.com', 'not the password at all');
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toMatch(/^[34]$/);
  });

  it('admits sign-ins sent at once as if one after another: past the free ones, one per wait', async () => {
    await member('burst@example.com');
    const client = new SiteClient(api.url);
    const form = await client.get('/partner/sign-in');
    const csrf = inputValue(form.text, '_csrf')!;
    const attempt = (password: string) => client.post('/partner/sign-in', { email: 'burst@example.com', password, code: '', _csrf: csrf });
    const started = Date.now();
    const statuses = (await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(`guess number ${i} of many`)))).map((p) => p.status);
    const checkable = mostChecked(Date.now() - started);
    // The checked ones are answered 401 (or 429 once the wait they began runs); the rest are never checked.
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(checkable);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20 - checkable);
    const failed = (await streamOf('burst@example.com')).filter((e) => e.type === 'MemberSignInFailed');
    expect(failed.length).toBeLessThanOrEqual(checkable);
  });

  it('throttles the password asked again before enrolling, in a row, and records each one checked', async () => {
    const client = await member('reauth@example.com');
    const { secret, enrol } = await totpForm(client);
    for (let i = 0; i < 3; i++) expect((await enrol(`guess number ${i} of many`, '000000')).status).toBe(422);
    const fourth = await enrol('guess number 3 of many', '000000');
    expect(fourth.status).toBe(429);
    // The first wait, 2 s from its admission, less the time its check took.
    expect(fourth.headers['retry-after']).toMatch(/^[12]$/);
    expect(fourth.text).toMatch(/Too many wrong attempts: wait [12] seconds before trying again/);
    // Refused while it waits, even with the right password and code: never checked, never recorded.
    const right = await enrol(PASSWORD, await totpAt(secret, clock.now()));
    expect(right.status).toBe(429);
    expect(right.headers['retry-after']).toBeDefined();
    const failed = (await streamOf('reauth@example.com')).filter((e) => e.type === 'MemberReauthenticationFailed');
    expect(failed.map((e) => e.data)).toEqual(
      Array(4).fill(expect.objectContaining({ purpose: 'totp-enrolment', reason: 'password', address: client.address })),
    );
    expect(failed.map((e) => e.metadata.actor)).toEqual(Array(4).fill(expect.stringMatching(/^member:/)));
    expect(JSON.stringify(failed)).not.toContain('guess number');
    expect((await streamOf('reauth@example.com')).map((e) => e.type)).not.toContain('MemberTotpEnrolled');
  });

  it('checks passwords asked again at once as if one after another: a stolen session cannot flood the hashing', async () => {
    const client = await member('reauth-burst@example.com');
    const { enrol } = await totpForm(client);
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => enrol(`guess number ${i} of many`, '000000')));
    const checkable = mostChecked(Date.now() - started);
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 422 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(24 - checkable);
    for (const answer of answers.filter((a) => a.status === 429)) expect(answer.headers['retry-after']).toMatch(/^\d+$/);
    // The checked ones (hashed) are recorded; the rest never were.
    const failed = (await streamOf('reauth-burst@example.com')).filter((e) => e.type === 'MemberReauthenticationFailed');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeLessThanOrEqual(checkable);
  });

  it('answers a wrong password and the right password with a wrong code alike, and records which it was', async () => {
    const client = await member('alike@example.com');
    const { secret, enrol } = await totpForm(client);
    const wrongPassword = await enrol('not the password at all', await totpAt(secret, clock.now()));
    const wrongCode = await enrol(PASSWORD, '000000');
    expect([wrongPassword.status, wrongCode.status]).toEqual([422, 422]);
    expect(wrongCode.text).toBe(wrongPassword.text);
    expect(wrongPassword.text).toContain('Your password or the code was not accepted');
    expect([wrongPassword.headers['retry-after'], wrongCode.headers['retry-after']]).toEqual([undefined, undefined]);
    const failed = (await streamOf('alike@example.com')).filter((e) => e.type === 'MemberReauthenticationFailed');
    expect(failed.map((e) => (e.data as { reason: string }).reason)).toEqual(['password', 'code']);
    expect(await enrol(PASSWORD, await totpAt(secret, clock.now()))).toMatchObject({
      status: 303,
      location: '/partner/security?done=totp',
    });
  });

  it("counts sign-ins and the password asked again in one budget of the account's, from any address", async () => {
    const client = await member('shared@example.com');
    // A session on a browser the member's device cookie is not on (cleared, or another browser's).
    client.jar.delete('partner_device');
    const { secret, enrol } = await totpForm(client);
    for (let i = 0; i < 2; i++) expect((await new SiteClient(api.url).signIn('shared@example.com', `guess ${i} of many`)).status).toBe(401);
    expect((await enrol('guess 2 of many', '000000')).status).toBe(422);
    const fourth = await new SiteClient(api.url).signIn('shared@example.com', 'guess 3 of many');
    expect(fourth.status).toBe(429);
    expect(fourth.headers['retry-after']).toMatch(/^[12]$/);
    const enrolling = await enrol(PASSWORD, await totpAt(secret, clock.now()));
    expect(enrolling.status).toBe(429);
    expect(enrolling.headers['retry-after']).toBeDefined();
    expect((await new SiteClient(api.url).signIn('shared@example.com', PASSWORD)).status).toBe(429);
  });

  it("keeps a member's known device signing in while strangers' wrong passwords make the account wait", async () => {
    const laptop = await member('known@example.com');
    const cookie = (await laptop.signIn('known@example.com', PASSWORD)).cookies.find((c) => c.startsWith('partner_device='));
    expect(cookie).toMatch(/^partner_device=[^;]+; Max-Age=\d{8}; Path=\/partner; HttpOnly; Secure; SameSite=Strict$/);
    for (let i = 0; i < 3; i++) expect((await new SiteClient(api.url).signIn('known@example.com', `guess ${i} of many`)).status).toBe(401);
    expect((await new SiteClient(api.url).signIn('known@example.com', 'guess 3 of many')).status).toBe(429);
    // The account waits for strangers, the right password too; the member's own device does not.
    expect((await new SiteClient(api.url).signIn('known@example.com', PASSWORD)).status).toBe(429);
    expect((await laptop.signIn('known@example.com', PASSWORD)).status).toBe(303);
    // The password asked again from that device is not kept waiting either.
    const { secret, enrol } = await totpForm(laptop);
    expect(await enrol(PASSWORD, await totpAt(secret, clock.now()))).toMatchObject({
      status: 303,
      location: '/partner/security?done=totp',
    });
  });

  it("counts a known device's wrong passwords against that device (and its address) only", async () => {
    const laptop = await member('careless@example.com');
    for (let i = 0; i < 3; i++) expect((await laptop.signIn('careless@example.com', `typo ${i} of many`)).status).toBe(401);
    const fourth = await laptop.signIn('careless@example.com', 'typo 3 of many');
    expect(fourth.status).toBe(429);
    expect(fourth.headers['retry-after']).toMatch(/^[12]$/);
    expect((await laptop.signIn('careless@example.com', PASSWORD)).status).toBe(429);
    // The account is not waiting: the member's other browser signs in.
    expect((await new SiteClient(api.url).signIn('careless@example.com', PASSWORD)).status).toBe(303);
  });

  it("takes no device cookie it did not make for that member: a forged one, or another member's, counts as a stranger", async () => {
    const other = await member('other-device@example.com');
    await member('target@example.com');
    const targetId = ((await streamOf('target@example.com'))[0].data as { memberId: string }).memberId;
    for (let i = 0; i < 4; i++) await new SiteClient(api.url).signIn('target@example.com', `guess ${i} of many`);
    const forger = new SiteClient(api.url);
    const [, endsAt, device, mac] = other.jar.get('partner_device')!.split('.');
    forger.jar.set('partner_device', `${targetId}.${endsAt}.${device}.${mac}`);
    expect((await forger.signIn('target@example.com', PASSWORD)).status).toBe(429);
    expect((await other.signIn('target@example.com', PASSWORD)).status).toBe(429);
  });

  it('throttles sign-up links by address, records a dead link in the stream of the member it names, and makes no stream for others', async () => {
    const link = await invite('probed@example.com');
    const token = new URL(link, api.url).searchParams.get('token')!;
    const prober = new SiteClient(api.url);
    const tryLink = async (client: SiteClient, t: string) =>
      client.submit('/partner/sign-in', '/partner/sign-up', { token: t, password: PASSWORD, password_confirmation: PASSWORD });
    const forged = `${token.split('.')[0]}.${'A'.repeat(43)}`;
    expect((await tryLink(prober, forged)).status).toBe(422);
    const madeUp = Array.from({ length: 10 }, (_, i) => `${i.toString(16).padStart(24, 'f')}.${'A'.repeat(43)}`);
    for (const t of madeUp.slice(0, 9)) expect((await tryLink(prober, t)).status).toBe(422);
    const eleventh = await tryLink(prober, madeUp[9]);
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers['retry-after']).toMatch(/^[12]$/);
    // While the address waits, no link is checked from it, the right one neither, by page or by form.
    expect((await prober.get(link)).status).toBe(429);
    expect((await tryLink(prober, token)).status).toBe(429);
    const refused = (await streamOf('probed@example.com')).filter((e) => e.type === 'MemberInvitationRefused');
    expect(refused.map((e) => e.data)).toEqual([expect.objectContaining({ reason: 'secret', address: prober.address })]);
    expect(refused[0].metadata.actor).toBe('anonymous');
    const store = api.get(EventStore);
    for (const t of madeUp) expect(await store.readStream(memberStream(t.split('.')[0]))).toEqual([]);
    // Another address is not kept waiting: the person signs up with the right link.
    const person = new SiteClient(api.url);
    expect((await person.get(link)).status).toBe(200);
    expect((await tryLink(person, token)).status).toBe(303);
  });

  it('answers a sign-up link whose secret is wrong as no link at all, whatever the member', async () => {
    const link = await invite('forged@example.com');
    const token = new URL(link, api.url).searchParams.get('token')!;
    const forged = `${token.split('.')[0]}.${'A'.repeat(43)}`;
    const client = new SiteClient(api.url);
    const tryLink = async (t: string) =>
      (await client.submit('/partner/sign-in', '/partner/sign-up', { token: t, password: PASSWORD, password_confirmation: PASSWORD }))
        .status;
    const unknown = `${'0'.repeat(24)}.${'A'.repeat(43)}`;
    expect([await tryLink(forged), await tryLink(unknown)]).toEqual([422, 422]);
    expect(await tryLink(token)).toBe(303);
    expect([await tryLink(forged), await tryLink(token)]).toEqual([422, 422]);
  });

  it('counts sign-up links against a member only while their invitation is live: links made up from an email never keep its member from signing in', async () => {
    await member('linked@example.com');
    const memberId = ((await streamOf('linked@example.com'))[0].data as { memberId: string }).memberId;
    // A plain GET anyone can make (a link on any page) from anywhere, naming the member by the hash of their email.
    const forged = `/partner/sign-up?token=${memberId}.${'A'.repeat(43)}`;
    for (let i = 0; i < 6; i++) expect((await new SiteClient(api.url).get(forged)).status).toBe(422);
    expect((await new SiteClient(api.url).signIn('linked@example.com', PASSWORD)).status).toBe(303);
    // Still refused alike and recorded.
    const refused = (await streamOf('linked@example.com')).filter((e) => e.type === 'MemberInvitationRefused');
    expect(refused).toHaveLength(6);
    // While an invitation is live, its links count against its member from any address.
    const link = await invite('invitee@example.com');
    const inviteeId = new URL(link, api.url).searchParams.get('token')!.split('.')[0];
    for (let i = 0; i < 3; i++)
      expect((await new SiteClient(api.url).get(`/partner/sign-up?token=${inviteeId}.${'B'.repeat(43)}`)).status).toBe(422);
    expect((await new SiteClient(api.url).get(`/partner/sign-up?token=${inviteeId}.${'B'.repeat(43)}`)).status).toBe(429);
  });

  it('keeps its own budget a person, apart from the API key: a flood through the key does not lock the site', async () => {
    const flooded = await api.createPartner('Flooded', 'partner', 5);
    const client = await member('flood@example.com', flooded.partnerId);
    for (let i = 0; i < 6; i++) await api.call('GET', '/api/v1/regions', { apiKey: flooded.apiKey });
    expect((await api.call('GET', '/api/v1/regions', { apiKey: flooded.apiKey })).status).toBe(429);
    const page = await client.get('/partner/keys');
    expect(page.status).toBe(200);
    // Its answers name the person's budget, and what is left of it.
    expect(page.headers['ratelimit-policy']).toBe('"member";q=5;w=60');
    expect(rateLimitFields(page.headers)?.get('member')?.remaining).toBeGreaterThan(0);
  });

  it("refuses key ids and form values that name an object's own machinery, without a 5xx or an event", async () => {
    const client = await member('proto@example.com');
    const before = (await api.get(EventStore).readStream(`partner-${partner.partnerId}`)).length;
    for (const id of ['constructor', '__proto__', 'toString'])
      expect((await client.submit('/partner/keys', `/partner/keys/${id}/name`, { name: 'x' })).status).toBe(404);
    const keys = await client.get('/partner/keys');
    const keyId = /action="\/partner\/keys\/([^/"]+)\/rotate"/.exec(keys.text)![1];
    const rotated = await client.submit('/partner/keys', `/partner/keys/${keyId}/rotate`, { grace: 'constructor' });
    expect(rotated.status).toBe(200);
    const after = await api.get(EventStore).readStream(`partner-${partner.partnerId}`);
    expect(after.slice(before).map((e) => e.type)).toEqual(['PartnerApiKeyIssued', 'PartnerApiKeyExpirySet']);
  });

  it('ends a session idle for 30 minutes, and every session on signing out everywhere', async () => {
    const idle = await member('idle@example.com');
    clock.advance(20 * 60_000);
    expect((await idle.get('/partner/keys')).status).toBe(200);
    clock.advance(29 * 60_000);
    expect((await idle.get('/partner/keys')).status).toBe(200);
    clock.advance(31 * 60_000);
    expect(await idle.get('/partner/keys')).toMatchObject({ status: 303, location: '/partner/sign-in' });

    const laptop = await member('everywhere@example.com');
    const phone = new SiteClient(api.url);
    expect((await phone.signIn('everywhere@example.com', PASSWORD)).status).toBe(303);
    expect((await phone.get('/partner/usage')).status).toBe(200);
    const out = await laptop.submit('/partner/security', '/partner/security/sign-out-everywhere', {});
    expect(out).toMatchObject({ status: 303, location: '/partner/sign-in' });
    expect(await phone.get('/partner/usage')).toMatchObject({ status: 303, location: '/partner/sign-in' });
    expect((await laptop.get('/partner/usage')).status).toBe(303);
  });

  it("shows the partner's usage this minute against its budget, today by status, and each key's last use", async () => {
    const used = await api.createPartner('Used', 'partner', 500);
    const client = await member('usage@example.com', used.partnerId);
    expect((await api.call('GET', '/api/v1/regions', { apiKey: used.apiKey })).status).toBe(200);
    expect((await api.call('GET', '/deals/no-such-deal', { apiKey: used.apiKey })).status).toBe(404);
    const page = await client.get('/partner/usage');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<strong>\d+<\/strong> of 500 requests/);
    expect(page.text).toContain('<td>200</td>');
    expect(page.text).toContain('<td>404</td><td>1</td>');
    expect(page.text).toContain('2026-06-15');
    const keys = await client.get('/partner/keys');
    expect(keys.text).toContain('Mon Jun 15 12:00:00 UTC 2026');
    expect(keys.text).not.toContain('never');
  });

  it("sets the partner's redemption rollback window: shown, refused when not whole hours from 0 to 720, blank back to the default", async () => {
    const client = await member('settings@example.com');
    const page = await client.get('/partner/settings');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Now: 24 hours (the default).');
    const bad = await client.submit('/partner/settings', '/partner/settings', { rollback_window_hours: '721' });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain('redemption rollback window hours must be a whole number of hours from 0 to 720');
    expect(bad.text).toContain('value="721"');
    const saved = await client.submit('/partner/settings', '/partner/settings', { rollback_window_hours: '2' });
    expect([saved.status, saved.headers.location]).toEqual([303, '/partner/settings?saved=1']);
    expect((await client.get('/partner/settings?saved=1')).text).toContain('Now: 2 hours.');
    const apiSettings = await api.call('GET', '/v1/partner_settings', { apiKey: partner.apiKey });
    expect(apiSettings.body.partner_settings).toEqual({
      redemption_rollback_window_hours: 2,
      redemption_rollback_window_is_default: false,
    });
    expect((await client.submit('/partner/settings', '/partner/settings', { rollback_window_hours: '' })).status).toBe(303);
    expect((await client.get('/partner/settings')).text).toContain('Now: 24 hours (the default).');
    const recorded = (await api.get(EventStore).readStream(`partner-${partner.partnerId}`)).filter(
      (e) => e.type === 'PartnerRollbackWindowChanged',
    );
    expect(recorded.map((e) => [e.data, e.metadata.actor])).toEqual([
      [{ partnerId: partner.partnerId, hours: 2 }, expect.stringMatching(/^member:/)],
      [{ partnerId: partner.partnerId, hours: null }, expect.stringMatching(/^member:/)],
    ]);
  });

  it("shows the partner's statements: the last 30 days as a chart drawn in the page, a day's figures and line items, its CSV", async () => {
    const client = await member('statements@example.com');
    const page = await client.get('/partner/settlements');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<svg role="img"');
    expect(page.text.match(/<rect /g)).toHaveLength(30);
    expect(page.text).toContain('<a href="/partner/settlements/2026-06-15">2026-06-15</a>');
    const day = await client.get('/partner/settlements/2026-06-14');
    expect(day.status).toBe(200);
    expect(day.text).toContain('Closed. SHA-256 of its CSV: <code>');
    expect(day.text).toContain('Nothing moved this day.');
    const csv = await client.get('/partner/settlements/2026-06-14/line_items.csv');
    expect([csv.status, csv.headers['content-type']]).toEqual([200, 'text/csv; charset=utf-8']);
    expect(csv.text).toMatch(/^position,line_id,kind,/);
    expect((await client.get('/partner/settlements/2026-13-01')).status).toBe(404);
    expect((await client.get('/partner/settlements/2099-01-01')).status).toBe(404);
  });

  it('cancels a bulk job from its page: a job queued behind a running one at once; the button gone once it is', async () => {
    const client = await member('bulk-cancel@example.com');
    const users = api.get(UserWrites);
    const register = users.register.bind(users);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // The first job's only item waits, so the second waits behind it.
    const hold = jest.spyOn(users, 'register').mockImplementation(async (user, ...rest) => {
      if (user.profile.email === 'held@bulk.example') await gate;
      return register(user, ...rest);
    });
    try {
      const start = async (email: string) =>
        (
          await api.call('POST', '/v1/bulk_jobs', {
            apiKey: partner.apiKey,
            body: { kind: 'users', items: [{ reference: email.split('@')[0], email }] },
          })
        ).body.bulk_job.id as string;
      await start('held@bulk.example');
      const queued = await start('queued@bulk.example');
      const page = await client.get(`/partner/bulk-jobs/${queued}`);
      expect(page.text).toContain('users: queued');
      expect(page.text).toContain('Cancel this job');
      const cancelled = await client.submit(`/partner/bulk-jobs/${queued}`, `/partner/bulk-jobs/${queued}/cancel`, {});
      expect([cancelled.status, cancelled.headers.location]).toEqual([303, `/partner/bulk-jobs/${queued}`]);
      const after = await client.get(`/partner/bulk-jobs/${queued}`);
      expect(after.text).toContain('users: cancelled');
      expect(after.text).not.toContain('Cancel this job');
      expect((await api.call('GET', `/v1/bulk_jobs/${queued}`, { apiKey: partner.apiKey })).body.bulk_job.status).toBe('cancelled');
      // Another partner's member finds no such job.
      const stranger = await member('stranger@bulk.example', (await api.createPartner('Bulk stranger')).partnerId);
      expect(
        (
          await stranger.post(`/partner/bulk-jobs/${queued}/cancel`, {
            _csrf: inputValue((await stranger.get('/partner/bulk-jobs')).text, '_csrf')!,
          })
        ).status,
      ).toBe(404);
    } finally {
      open();
      hold.mockRestore();
    }
  });

  it('refuses a form posted without its CSRF token, or with another session’s (403)', async () => {
    const client = await member('csrf@example.com');
    const other = await member('csrf2@example.com');
    const foreign = inputValue((await other.get('/partner/keys')).text, '_csrf')!;
    expect((await client.post('/partner/keys', { name: 'forged' })).status).toBe(403);
    expect((await client.post('/partner/keys', { name: 'forged', _csrf: foreign })).status).toBe(403);
    expect((await client.post('/partner/security/sign-out-everywhere', { _csrf: 'x' })).status).toBe(403);
    expect((await new SiteClient(api.url).post('/partner/sign-in', { email: 'csrf@example.com', password: PASSWORD })).status).toBe(403);
    expect((await client.get('/partner/keys')).text).not.toContain('forged');
  });

  it('refuses a form with the right token posted from another origin (Origin, else Referer), or from nowhere said (403)', async () => {
    const client = await member('origin@example.com');
    const _csrf = inputValue((await client.get('/partner/keys')).text, '_csrf')!;
    const issue = (name: string, from: PostedFrom) => client.post('/partner/keys', { name, _csrf }, from);
    const foreign = await issue('cross-origin', { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain('Form refused');
    expect(foreign.headers['content-security-policy']).toBeDefined();
    // Another port or scheme of the same host is another origin; an opaque one (`null`) is no origin.
    const own = new URL(api.url);
    for (const origin of [`https://${own.hostname}:1`, `http://${own.host}`, 'null'])
      expect((await issue('cross-origin', { origin })).status).toBe(403);
    expect((await issue('cross-origin', { origin: null, referer: 'https://evil.example/partner/keys' })).status).toBe(403);
    expect((await issue('cross-origin', { origin: null })).status).toBe(403);
    // From the site's own pages: its Origin, or without one its Referer.
    expect((await issue('same-origin', {})).status).toBe(200);
    expect((await issue('same-referer', { origin: null, referer: `${api.url}/partner/keys` })).status).toBe(200);
    const keys = (await client.get('/partner/keys')).text;
    expect(keys).not.toContain('cross-origin');
    expect(keys).toContain('same-origin');
    expect(keys).toContain('same-referer');
    // A visitor's form too (sign-up: its refusals are not throttled).
    const visitor = new SiteClient(api.url);
    const form = inputValue((await visitor.get('/partner/sign-in')).text, '_csrf')!;
    const signUp = (from: PostedFrom) =>
      visitor.post('/partner/sign-up', { token: 'made-up', password: PASSWORD, password_confirmation: PASSWORD, _csrf: form }, from);
    expect((await signUp({ origin: 'https://evil.example' })).status).toBe(403);
    expect((await signUp({ origin: null, referer: 'https://evil.example/' })).status).toBe(403);
    expect((await signUp({})).status).toBe(422);
  });

  it("replaces a partner_form cookie the service did not make: the page's token is not bound to it", async () => {
    const signUp = (client: SiteClient, _csrf: string) =>
      client.post('/partner/sign-up', { token: 'made-up', password: PASSWORD, password_confirmation: PASSWORD, _csrf });
    for (const chosen of ['A'.repeat(43), `${'A'.repeat(43)}.${'B'.repeat(43)}`, 'x']) {
      const visitor = new SiteClient(api.url);
      visitor.jar.set('partner_form', chosen);
      const page = await visitor.get('/partner/sign-in');
      expect(page.cookies.some((c) => c.startsWith('partner_form='))).toBe(true);
      expect(visitor.jar.get('partner_form')).not.toBe(chosen);
      const token = inputValue(page.text, '_csrf')!;
      // The token goes with the cookie the service made, not with the one chosen.
      const withChosen = new SiteClient(api.url);
      withChosen.jar.set('partner_form', chosen);
      expect((await signUp(withChosen, token)).status).toBe(403);
      expect((await signUp(visitor, token)).status).toBe(422);
    }
    // A cookie the service made is kept.
    const visitor = new SiteClient(api.url);
    await visitor.get('/partner/sign-in');
    const made = visitor.jar.get('partner_form')!;
    expect(made).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    const again = await visitor.get('/partner/sign-in');
    expect(again.cookies).toEqual([]);
    expect((await signUp(visitor, inputValue(again.text, '_csrf')!)).status).toBe(422);
  });

  it("answers an unknown path under /partner with the site's 404 page and headers; the API's unknown paths keep their JSON", async () => {
    const visitor = new SiteClient(api.url);
    const signedIn = await member('lost@example.com');
    const _csrf = inputValue((await signedIn.get('/partner/keys')).text, '_csrf')!;
    const answers = [
      await visitor.get('/partner/no-such-page'),
      await visitor.get('/partner/keys/some/thing/else?q=1'),
      await signedIn.get('/partner/no-such-page'),
      await signedIn.post('/partner/no-such-page', { _csrf }),
    ];
    for (const page of answers) {
      expect(page.status).toBe(404);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<h1>Not found</h1>');
      expect(page.text).toContain('<link rel="stylesheet" href="/partner/site.css">');
      expect(page.headers).toMatchObject({
        'content-security-policy': SITE_POLICY,
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'same-origin',
        'cache-control': 'no-store',
        'strict-transport-security': 'max-age=31536000',
      });
    }
    const unknown = await api.call('GET', '/v1/no-such-thing', { apiKey: partner.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_type).toBe('find_failed');
    expect(unknown.headers['content-security-policy']).toBeUndefined();
  });

  it("answers a 2 MiB form with the site's 413 page every time, never a reset connection: the body is read before the close", async () => {
    const signedIn = await member('large-form@example.com');
    const cookie = [...signedIn.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const form = Buffer.from(`name=${'a'.repeat(2 * 1024 * 1024)}`);
    const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: api.url };
    // Ten in a row, each on a fresh connection and sent a piece at a time, a visitor's and a member's.
    for (let i = 0; i < 10; i++) {
      const page = await postInPieces(`${api.url}${i % 2 ? '/partner/sign-in' : '/partner/keys'}`, { ...headers, cookie }, form);
      expect(page.status).toBe(413);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<h1>Refused</h1>');
      expect(page.text).toContain('The form is larger than the site takes.');
      expect(page.headers).toMatchObject({ 'content-security-policy': SITE_POLICY, 'cache-control': 'no-store', connection: 'close' });
    }
  });

  it('refuses an email longer than any without showing it back, and shows back a bounded part of a long look-up', async () => {
    const visitor = new SiteClient(api.url);
    const long = await visitor.signIn(`${'w'.repeat(60_000)}@example.com`, 'a guess');
    expect(long.status).toBe(422);
    expect(long.text).toContain('Email is not an email address: it has at most 254 characters.');
    expect(long.text).not.toContain('wwww');
    expect(inputValue(long.text, 'email')).toBe('');
    // An email of the longest length is taken (and answered as any unknown one).
    const longest = `${'x'.repeat(254 - '@example.com'.length)}@example.com`;
    const answered = await visitor.signIn(longest, 'a guess');
    expect(answered.status).toBe(401);
    expect(inputValue(answered.text, 'email')).toBe(longest);
    const client = await member('long-lookup@example.com');
    const lookup = await client.get(`/partner/lookup?q=${'q'.repeat(5000)}`);
    expect(lookup.status).toBe(404);
    expect(Math.max(...(lookup.text.match(/q+/g) ?? []).map((run) => run.length))).toBeLessThanOrEqual(200);
  });

  it("looks up the partner's purchases and coupons by id, email and reference; another partner's are not found", async () => {
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, id: 'site-deal', quantity: 10, max_per_user: undefined }]);
    const userId = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'buyer@example.com' } })).body.user_id;
    const purchaseId = (
      await api.call('POST', '/purchases/reserve', { apiKey: partner.apiKey, body: { deal_id: 'site-deal', num_bought: 1 } })
    ).body.purchase.id;
    const claimed = await api.call('PUT', `/purchases/${purchaseId}/claim`, { apiKey: partner.apiKey, body: { user_id: userId } });
    const couponId = claimed.body.purchase.coupons[0].id;
    await api.settle();

    const ours = await member('support@example.com');
    for (const q of [purchaseId, couponId, 'buyer@example.com']) {
      const found = await ours.get(`/partner/lookup?q=${encodeURIComponent(q)}`);
      expect(found.status).toBe(200);
      expect(found.text).toContain(purchaseId);
    }
    const rival = await api.createPartner('Rival');
    const theirs = await member('rival@example.com', rival.partnerId);
    for (const q of [purchaseId, couponId, 'buyer@example.com']) {
      const notFound = await theirs.get(`/partner/lookup?q=${encodeURIComponent(q)}`);
      expect(notFound.status).toBe(404);
      expect(notFound.text).toContain('Not found');
      expect(notFound.text).not.toMatch(/<table/);
    }
  });

  it("partners:remove-member ends a person's sessions at once and keeps them out until invited again", async () => {
    const leaving = await member('leaving@example.com');
    expect((await leaving.get('/partner/keys')).status).toBe(200);
    const removed = await runCli(api.dataDir, ['partners:remove-member', partner.partnerId, 'Leaving@Example.com', '--json']);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ email: 'Leaving@Example.com', ended_sessions: 1 });
    await api.settle();
    expect(await leaving.get('/partner/keys')).toMatchObject({ status: 303, location: '/partner/sign-in' });
    expect((await new SiteClient(api.url).signIn('leaving@example.com', PASSWORD)).status).toBe(401);
    const listed = JSON.parse((await runCli(api.dataDir, ['partners:members', partner.partnerId, '--json'])).stdout);
    expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ email: 'leaving@example.com', status: 'removed' })]));
    const unknown = await runCli(api.dataDir, ['partners:remove-member', partner.partnerId, 'nobody@example.com']);
    expect(unknown.stderr).toContain('no person of this partner');
    // Invited again, they sign up afresh.
    expect(await member('leaving@example.com')).toBeDefined();
  }, 60_000);

  it('partners:invite prints a one-time sign-up link (--json)', async () => {
    const out = await runCli(api.dataDir, ['partners:invite', partner.partnerId, 'cli@example.com', '--json'], {
      PUBLIC_BASE_URL: api.url,
    });
    expect(out.code).toBe(0);
    const printed = JSON.parse(out.stdout);
    expect(printed).toMatchObject({ partner_id: partner.partnerId, email: 'cli@example.com' });
    expect(printed.sign_up_url).toMatch(new RegExp(`^${api.url}/partner/sign-up\\?token=[0-9a-f]{24}\\.[A-Za-z0-9_-]{43}$`));
    await api.settle();
    expect((await new SiteClient(api.url).get(new URL(printed.sign_up_url).pathname + new URL(printed.sign_up_url).search)).status).toBe(
      200,
    );
  });

  it("test mode: a form drawn in one mode is refused once the mode changed; sign-out ends it; people are the live partner's", async () => {
    const client = await member('modes@example.com');
    const toTest = await client.submit('/partner/keys', '/partner/mode', { mode: 'test', back: '/partner/settings' });
    expect(toTest).toMatchObject({ status: 303, location: '/partner/settings' });
    const testPage = await client.get('/partner/settings');
    expect(testPage.text).toContain('Test mode.');
    const drawnInTest = inputValue(testPage.text, '_csrf')!;
    // Left in another tab: the form drawn in test mode must not change the live settings.
    expect((await client.submit('/partner/settings', '/partner/mode', { mode: 'live', back: '/partner/settings' })).status).toBe(303);
    const stale = await client.post('/partner/settings', { _csrf: drawnInTest, rollback_window_hours: '1' });
    expect(stale.status).toBe(403);
    expect((await api.call('GET', '/v1/partner_settings', { apiKey: partner.apiKey })).body).toMatchObject({
      partner_settings: { redemption_rollback_window_hours: 24 },
    });
    // Back in test mode, the same change lands on the sandbox only.
    await client.submit('/partner/keys', '/partner/mode', { mode: 'test', back: '/partner/settings' });
    expect((await client.submit('/partner/settings', '/partner/settings', { rollback_window_hours: '2' })).status).toBe(303);
    const settings = (apiKey: string) => api.call('GET', '/v1/partner_settings', { apiKey });
    expect((await settings(partner.sandbox!.apiKey)).body.partner_settings.redemption_rollback_window_hours).toBe(2);
    expect((await settings(partner.apiKey)).body.partner_settings.redemption_rollback_window_hours).toBe(24);
    // A back address off the site is not followed.
    expect(await client.submit('/partner/keys', '/partner/mode', { mode: 'test', back: '//evil.example/x' })).toMatchObject({
      status: 303,
      location: '/partner/keys',
    });
    await client.submit('/partner/keys', '/partner/sign-out', {});
    await client.signIn('modes@example.com', PASSWORD);
    expect((await client.get('/partner/keys')).text).not.toContain('Test mode.');
    // People are invited to the live partner, never to its sandbox.
    await expect(
      api.get(CommandBus).execute(new InviteMember(partner.sandbox!.partnerId, 'sandboxed@example.com', OPERATOR)),
    ).rejects.toThrow("id is a sandbox's: invite people to its live partner");
  });

  it('records who did what in the log an auditor reads, and keeps every secret out of the logs', async () => {
    const link = await invite('audit@example.com');
    const client = new SiteClient(api.url);
    const token = new URL(link, api.url).searchParams.get('token')!;
    await client.submit(link, '/partner/sign-up', { token, password: PASSWORD, password_confirmation: PASSWORD });
    await client.signIn('audit@example.com', 'a wrong password entirely');
    await client.signIn('audit@example.com', PASSWORD);
    const session = client.jar.get('partner_session')!;
    const issued = await client.submit('/partner/keys', '/partner/keys', { name: 'audited' });
    const apiKey = /<code id="api-key">([^<]+)<\/code>/.exec(issued.text)![1];

    const events = await api.get(EventStore).readAll({ after: null, maxCount: 10_000 });
    const of = (type: string) => events.filter((e) => e.type === type).map((e) => e.metadata.actor);
    const memberId = events.find((e) => e.type === 'MemberInvited' && (e.data as { email: string }).email === 'audit@example.com')!
      .data as {
      memberId: string;
    };
    const actor = `member:${memberId.memberId}`;
    expect(of('MemberSignedIn')).toContain(actor);
    expect(of('MemberSignInFailed')).toContain('anonymous');
    expect(events.some((e) => e.type === 'PartnerApiKeyIssued' && e.metadata.actor === actor)).toBe(true);
    // What an auditor reads of the partner: its keys' and its people's events together, in log order, without a secret.
    await api.settle();
    const auditor = await api.createPartner('Site auditor', 'auditor');
    const audit = await api.call('GET', `/audit/partners/${partner.partnerId}`, { apiKey: auditor.apiKey });
    const seen = audit.body.events.map((e: { type: string; actor: string }) => `${e.type} ${e.actor}`);
    expect(seen).toEqual(
      expect.arrayContaining([
        'MemberSignInFailed anonymous',
        `MemberSignedIn ${actor}`,
        `PartnerApiKeyIssued ${actor}`,
        'PartnerRegistered operator',
      ]),
    );
    const positions = audit.body.events.map((e: { position: string }) => e.position);
    expect(positions).toEqual([...positions].sort());
    for (const secret of [session, PASSWORD, token.split('.')[1], apiKey]) expect(JSON.stringify(audit.body)).not.toContain(secret);
    expect(JSON.stringify(audit.body)).not.toMatch(/[0-9a-f]{64}/);
    const log = JSON.stringify(events) + readFileSync(logFile, 'utf8');
    expect(readFileSync(logFile, 'utf8')).toContain('/partner/keys');
    for (const secret of [session, PASSWORD, token.split('.')[1], apiKey]) expect(log).not.toContain(secret);
  });
});

describe('the partner site behind a TLS proxy (BEHIND_TLS_PROXY): its origin is https and the host the proxy forwards', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await TestApi.start({ env: { BEHIND_TLS_PROXY: 'on' } });
  });
  afterAll(() => api.close());

  it('takes forms posted from the forwarded origin, and refuses the address behind the proxy', async () => {
    const behind = `http://127.0.0.1:${api.port}`;
    const visitor = new SiteClient(behind, {
      origin: 'https://partners.example.com',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'partners.example.com' },
    });
    const _csrf = inputValue((await visitor.get('/partner/sign-in')).text, '_csrf')!;
    const signUp = (from: PostedFrom) =>
      visitor.post('/partner/sign-up', { token: 'made-up', password: PASSWORD, password_confirmation: PASSWORD, _csrf }, from);
    expect((await signUp({})).status).toBe(422);
    expect((await signUp({ origin: null, referer: 'https://partners.example.com/partner/sign-in' })).status).toBe(422);
    for (const origin of [behind, `https://127.0.0.1:${api.port}`, 'http://partners.example.com'])
      expect((await signUp({ origin })).status).toBe(403);
  });

  /** A visitor behind a proxy that appends the peer it saw to X-Forwarded-For, after whatever the client wrote there. */
  const throughProxy = (forwardedFor: string) =>
    new SiteClient(`http://127.0.0.1:${api.port}`, {
      origin: 'https://partners.example.com',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'partners.example.com', 'x-forwarded-for': forwardedFor },
    });

  it('counts wrong sign-ins by the address the proxy appended, never by an entry the client wrote before it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await throughProxy(`198.51.100.${i + 1}, 203.0.113.7`).signIn(`nobody${i}@example.com`, 'a guess')).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
    // Another client behind the same proxy is not kept waiting.
    expect((await throughProxy('203.0.113.8').signIn('nobody@example.com', 'a guess')).status).toBe(401);
  });

  it('records the appended address in the events, and the connecting peer when the forwarded one is no address', async () => {
    const partner = await api.createPartner('Behind the proxy');
    const invited = await api.get(CommandBus).execute(new InviteMember(partner.partnerId, 'proxied@example.com', OPERATOR));
    await api.settle();
    const junk = `<script>${'J'.repeat(6000)}`;
    expect((await throughProxy(`${junk}, 203.0.113.9`).signIn('proxied@example.com', 'a guess')).status).toBe(401);
    const direct = throughProxy(junk);
    expect((await direct.signIn('proxied@example.com', 'a guess')).status).toBe(401);
    const failed = (await api.get(EventStore).readStream(memberStream(invited.memberId))).filter((e) => e.type === 'MemberSignInFailed');
    expect(failed.map((e) => (e.data as { address: string }).address)).toEqual(['203.0.113.9', direct.address]);
    // As stored, the member's email and addresses are ciphertext under the member's own key.
    const stored = JSON.stringify(await storedLog(api.get(EventStore)).readStream(memberStream(invited.memberId)));
    expect([stored.includes('proxied@example.com'), stored.includes('203.0.113.9'), stored.includes(PERSONAL_ENVELOPE)]).toEqual([
      false,
      false,
      true,
    ]);
  });
});
