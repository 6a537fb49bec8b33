import { CatalogQueries, type RegionTerms } from '@deals/catalog';
import { EventStore, ManualClock, Scheduler } from '@deals/kernel';
import { DailyDigest, DailyDigestJobs } from '@deals/messaging';
import { request } from 'undici';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { SmtpSink } from '../../support/smtp-sink';
import { InsecureHttps } from '../../support/insecure-https';

const maui: RegionTerms = {
  ...chicago,
  id: 'maui',
  name: 'Maui',
  city: 'Kahului',
  state: 'HI',
  time_zone: 'Pacific/Honolulu',
  latitude: 20.89,
  longitude: -156.47,
  postal_codes: ['96732'],
};
const deals = [
  { ...spaDay, id: 'chicago-spa-season', start_at: '2026-06-01T00:00:00Z', end_at: '2026-12-31T00:00:00Z' },
  { ...spaDay, id: 'maui-surf', title: 'Surf lesson', region_id: 'maui', start_at: '2026-06-01T00:00:00Z', end_at: '2026-12-31T00:00:00Z' },
];
const insecure = new InsecureHttps();

describe('the daily regional email at the local hour (DIGEST_HOUR 7), with suppress and augment batches', () => {
  // States awaited up to a ceiling that means hung (eventually's), below each test's own.
  jest.setTimeout(60_000);
  const clock = new ManualClock(new Date('2026-07-09T12:00:00Z'));
  let sink: SmtpSink;
  let api: TestApi;
  let apiKey: string;
  const ids: Record<string, string> = {};
  const subscriptions: Record<string, string> = {};
  beforeAll(async () => {
    sink = await SmtpSink.start();
    api = await TestApi.start({ clock, env: { SMTP_URL: sink.url, DIGEST_HOUR: '7' } });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago, maui]);
    await api.importDeals(deals);
    for (const name of ['plain', 'suppressed', 'augmented', 'inactive', 'deleted', 'islander']) {
      ids[name] = (await api.call('POST', '/users', { apiKey, body: { email: `${name}@example.com` } })).body.user_id;
      const zip = name === 'islander' ? '96732' : '60601';
      subscriptions[name] = (await api.call('POST', `/users/${ids[name]}/subscriptions`, { apiKey, body: { zip } })).body.subscription.id;
    }
    await api.call('PUT', `/subscriptions/${subscriptions.inactive}`, { apiKey, body: { status: 'inactive' } });
    await api.call('PUT', `/users/${ids.deleted}`, { apiKey, body: { is_deleted: true } });
    for (const [name, mode] of [
      ['suppressed', 'suppress'],
      ['augmented', 'augment'],
    ])
      expect(
        (
          await api.call('POST', '/v1/targeted_email/batches', {
            apiKey,
            body: { deal_id: deals[0].id, user_ids: [ids[name]], mode, send_at: '2026-07-10T15:00:00Z' },
          })
        ).status,
      ).toBe(201);
  });
  afterAll(async () => {
    await api?.close();
    await sink?.close();
  });

  const digests = (name: string) => sink.to(`${name}@example.com`).filter((m) => m.parsed.subject?.startsWith("Today's deals"));
  /** The URL of a message's List-Unsubscribe header (folded lines unfolded). */
  const unsubscribeLink = (raw: string) => /^List-Unsubscribe:\s*<([^>]+)>/m.exec(raw.replace(/\r?\n[ \t]+/g, ''))?.[1] ?? '';
  /** The daily jobs armed as a start arms them, with the clock at `at`: a region whose hour has come that day has its job run now. */
  const armAt = async (at: string) => {
    clock.set(at);
    await api.get(DailyDigestJobs).rearm();
  };
  /** When each daily job held is armed for, by its id. */
  const armed = async () => Object.fromEntries((await api.get(Scheduler).list(1000)).map((job) => [job.id, job.runAt.toISOString()]));
  /** Waits until the scheduler holds the job no more (never armed, or run to its end): it sends nothing after. */
  const ended = async (id: string) => {
    const held = async () => (await api.get(Scheduler).list(1000)).some((job) => job.id === id && job.state !== 'failed');
    expect(await eventually(held, (still) => !still)).toBe(false);
  };

  it("sends each region's email at 7:00 its local time: the region's deals, to active subscriptions, suppress honoured, augment not", async () => {
    await armAt('2026-07-10T11:59:59Z'); // 06:59:59 in Chicago, 01:59:59 in Maui
    expect(await armed()).toMatchObject({
      'send-digest-chicago-2026-07-10': '2026-07-10T12:00:00.000Z',
      'send-digest-maui-2026-07-10': '2026-07-10T17:00:00.000Z',
    });
    // Their timers count real time from the arming: armed again once the clock is past 7:00 in Chicago, its job runs now.
    await armAt('2026-07-10T12:00:01Z');
    await ended('send-digest-chicago-2026-07-10');
    expect(digests('plain')).toHaveLength(1);
    expect(digests('augmented')).toHaveLength(1);
    expect(digests('suppressed')).toHaveLength(0);
    expect(digests('inactive')).toHaveLength(0);
    expect(digests('deleted')).toHaveLength(0);
    expect(digests('islander')).toHaveLength(0); // 02:00 in Maui
    const { parsed } = digests('plain')[0];
    expect(parsed.subject).toBe("Today's deals in Chicago");
    expect(parsed.text).toContain(deals[0].title);
    expect(parsed.text).not.toContain('Surf lesson');
    const { raw } = digests('plain')[0];
    expect(raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
    expect(unsubscribeLink(raw)).toMatch(new RegExp(`/subscriptions/${subscriptions.plain}/unsubscribe\\?key=`));
    const recorded = (await api.get(EventStore).readStream('digest-chicago-2026-07-10')).map(
      (e) => e.data as { userId: string; outcome: string; reason: string },
    );
    expect(recorded.find((r) => r.userId === ids.suppressed)).toMatchObject({ outcome: 'skipped', reason: 'a suppress batch of that day' });
    expect(recorded.find((r) => r.userId === ids.deleted)).toMatchObject({ outcome: 'skipped' });

    await armAt('2026-07-10T17:00:01Z'); // 07:00:01 in Maui
    await ended('send-digest-maui-2026-07-10');
    expect(digests('islander')).toHaveLength(1);
    expect(digests('islander')[0].parsed.text).toContain('Surf lesson');
  });

  it('sends no one two the same day: a second run, or a restart of the jobs, sends nothing more', async () => {
    const before = sink.received.length;
    // With no one left to write to, the catalogue is not searched (a job re-armed every hour and at every start).
    const searches = jest.spyOn(api.get(CatalogQueries), 'onSaleInRegion');
    try {
      expect(await api.get(DailyDigest).send('chicago', '2026-07-10', 7)).toEqual({ sent: 0, skipped: 0, failed: 0 });
      expect(searches).not.toHaveBeenCalled();
    } finally {
      searches.mockRestore();
    }
    await api.get(DailyDigestJobs).rearm();
    // Today's jobs, had the start armed them again, run to their end before the count.
    await ended('send-digest-chicago-2026-07-10');
    await ended('send-digest-maui-2026-07-10');
    expect(sink.received.length).toBe(before);
  });

  it('unsubscribes in one click with the link the email carries, and the form body a mail client sends; without its key, nothing', async () => {
    const link = unsubscribeLink(digests('plain')[0].raw).replace(/^https:\/\/localhost:\d+/, api.url);
    // RFC 8058: a POST of `List-Unsubscribe=One-Click`, URL-encoded or multipart (or, from some clients, no body).
    const oneClick = {
      'application/x-www-form-urlencoded': 'List-Unsubscribe=One-Click',
      'multipart/form-data; boundary=b0': '--b0\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b0--\r\n',
    };
    const post = async (url: string, type?: keyof typeof oneClick) => {
      const reply = await request(url, {
        method: 'POST',
        dispatcher: insecure,
        ...(type ? { headers: { 'content-type': type }, body: oneClick[type] } : {}),
      });
      await reply.body.text();
      return reply.statusCode;
    };
    expect(await post(link.replace(/key=[^&]+/, 'key=nope'), 'application/x-www-form-urlencoded')).toBe(404);
    for (const type of Object.keys(oneClick) as Array<keyof typeof oneClick>) expect(await post(link, type)).toBe(200);
    expect(await post(link)).toBe(200);
    expect((await api.call('GET', `/subscriptions/${subscriptions.plain}`, { apiKey })).body.subscription.status).toBe('inactive');
    // A form body anywhere else is still refused: the API takes JSON.
    const form = await request(`${api.url}/users?api_key=${apiKey}`, {
      method: 'POST',
      dispatcher: insecure,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=a%40example.com',
    });
    expect(form.statusCode).toBe(415);
    expect(await form.body.json()).toMatchObject({ status: 'error', error_type: 'bad_request' });
    const multipart = await request(`${api.url}/users?api_key=${apiKey}`, {
      method: 'POST',
      dispatcher: insecure,
      headers: { 'content-type': 'multipart/form-data; boundary=b0' },
      body: oneClick['multipart/form-data; boundary=b0'],
    });
    expect(multipart.statusCode).toBe(415);
    await multipart.body.text();
  });

  it("sends a region's email of today now: npm run cli -- mail:digest <region_id>", async () => {
    // The CLI's clock is the real one: today's email there has not gone out.
    const first = await runCli(api.dataDir, ['mail:digest', 'chicago'], { SMTP_URL: sink.url });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/daily email of chicago for \d{4}-\d\d-\d\d: 2 sent, 1 skipped, 0 failed/);
    const second = await runCli(api.dataDir, ['mail:digest', 'chicago'], { SMTP_URL: sink.url });
    expect(second.stdout).toMatch(/: 0 sent, 0 skipped, 0 failed/);
    expect((await runCli(api.dataDir, ['mail:digest', 'nowhere'])).code).not.toBe(0);
  }, 120_000);

  it("sends a region's day once when two runs of it start together (a job re-armed while one sends)", async () => {
    clock.set('2026-07-11T12:00:00Z');
    // Chicago's active subscribers by now (plain unsubscribed above): augmented and suppressed.
    const before = new Map(['augmented', 'suppressed'].map((name) => [name, digests(name).length]));
    const runs = await Promise.all([1, 2].map(() => api.get(DailyDigest).send('chicago', '2026-07-11', 7)));
    expect(runs.map((run) => run.sent).sort()).toEqual([0, 2]);
    expect([...before].map(([name, count]) => [name, digests(name).length - count])).toEqual([
      ['augmented', 1],
      ['suppressed', 1],
    ]);
  });
});
