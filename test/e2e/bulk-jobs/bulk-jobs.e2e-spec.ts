import { IssuePartnerApiKey, RevokePartnerApiKey, RotatePartnerApiKey, UserWrites } from '@deals/accounts';
import { BulkJobRunner } from '@deals/bulk-jobs';
import { BulkItems } from '@deals/bulk-jobs/items/bulk-items';
import { CancelRevokedKeyJobs } from '@deals/bulk-jobs/reactions/cancel-revoked-key-jobs.reaction';
import { MAX_CHUNK_RUNS } from '@deals/bulk-jobs/domain/bulk-job.decider';
import { EventStore, ManualClock, OPERATOR } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { eventually } from '../../support/eventually';
import { Reply, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { buyerWithCard } from '../../support/test-cards';

const HOUR = 3_600_000;

describe('bulk jobs: POST /v1/bulk_jobs, GET /v1/bulk_jobs[/:id[/results[.csv]]]', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const later = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
  let api: TestApi;
  let apiKey: string;
  let otherKey: string;
  let testKey: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    const partner = await api.createPartner();
    apiKey = partner.apiKey;
    testKey = partner.sandbox!.apiKey;
    otherKey = (await api.createPartner('Other')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([spaDay]);
  });
  afterAll(() => api.close());

  const start = (body: unknown, key = apiKey) => api.call('POST', '/v1/bulk_jobs', { apiKey: key, body });
  const job = (id: string, key = apiKey) => api.call('GET', `/v1/bulk_jobs/${id}`, { apiKey: key });
  /** The job once completed: its status is polled (the items run in the background). */
  const completed = async (id: string, key = apiKey): Promise<Reply> => {
    for (;;) {
      const reply = await job(id, key);
      if (reply.status !== 200 || reply.body.bulk_job.status === 'completed') return reply;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const results = async (id: string, query = '') => (await api.call('GET', `/v1/bulk_jobs/${id}/results${query}`, { apiKey })).body;

  it('makes users, matches one by email, refuses a bad one with the error body of POST /users, and says each', async () => {
    const taken = (await api.call('POST', '/users', { apiKey, body: { email: 'taken@example.com' } })).body.user_id;
    const accepted = await start({
      kind: 'users',
      items: [
        { reference: 'r1', email: 'ana@example.com', first_name: 'Ana' },
        { reference: 'r2', email: 'TAKEN@example.com' },
        { reference: 'r3', email: 'not an email' },
      ],
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({
      status: 'success',
      bulk_job: { kind: 'users', item_count: 3, livemode: true },
      limits: { max_items: 10_000, max_open_jobs: 3 },
    });
    const id = accepted.body.bulk_job.id as string;
    expect((await completed(id)).body.bulk_job).toMatchObject({
      status: 'completed',
      processed_count: 3,
      succeeded_count: 1,
      matched_count: 1,
      failed_count: 1,
      already_done_count: 0,
    });
    const single = await api.call('POST', '/users', { apiKey, body: { email: 'not an email' } });
    const { results: items } = await results(id);
    expect(items).toEqual([
      {
        index: 0,
        reference: 'r1',
        status: 'succeeded',
        resource_id: expect.any(String),
        done_by_job: null,
        http_status: null,
        error: null,
      },
      { index: 1, reference: 'r2', status: 'matched', resource_id: taken, done_by_job: null, http_status: null, error: null },
      { index: 2, reference: 'r3', status: 'failed', resource_id: null, done_by_job: null, http_status: single.status, error: single.body },
    ]);
    const made = await api.call('GET', `/users/${items[0].resource_id}`, { apiKey });
    expect(made.body.user).toMatchObject({ id: items[0].resource_id, firstname: 'Ana' });
    // Sent again: every reference done is done already, by the first job; the refused one is tried again.
    const again = (
      await start({
        kind: 'users',
        items: [
          { reference: 'r1', email: 'ana@example.com' },
          { reference: 'r3', email: 'x' },
        ],
      })
    ).body;
    expect((await completed(again.bulk_job.id)).body.bulk_job).toMatchObject({ already_done_count: 1, failed_count: 1 });
    expect((await results(again.bulk_job.id)).results[0]).toMatchObject({
      status: 'already_done',
      done_by_job: id,
      resource_id: items[0].resource_id,
    });
    // The CSV, and another partner sees no such job.
    const csv = await api.raw('GET', `/v1/bulk_jobs/${id}/results.csv`, { apiKey });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(String(csv.text).split('\n')[0]).toBe('index,reference,status,resource_id,done_by_job,http_status,error_type,error_msg');
    expect(String(csv.text).trim().split('\n')).toHaveLength(4);
    expect((await job(id, otherKey)).status).toBe(404);
    // The feed says it completed, with the job as the resource.
    const feed = async () =>
      ((await api.call('GET', '/v1/events?per_page=1000', { apiKey })).body.events as Array<Record<string, unknown>>).filter(
        (e) => e.type === 'bulk_job.completed' && e.resource_id === id,
      );
    let said = await feed();
    while (said.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      said = await feed();
    }
    expect(said).toEqual([
      expect.objectContaining({
        resource: 'bulk_job',
        livemode: true,
        data: expect.objectContaining({ id, status: 'completed', item_count: 3 }),
      }),
    ]);
  });

  it('saves deals, subscribes and redeems through the single calls, each item refused as its call would be', async () => {
    const user = (await api.call('POST', '/users', { apiKey, body: { email: 'saver@example.com' } })).body.user_id;
    const saved = (
      await start({
        kind: 'saved_deals',
        items: [
          { reference: 's1', user_id: user, deal_id: 'chicago-spa-day' },
          { reference: 's2', user_id: 'nobody', deal_id: 'chicago-spa-day' },
          { reference: 's3', deal_id: 'chicago-spa-day' },
        ],
      })
    ).body.bulk_job.id;
    expect((await completed(saved)).body.bulk_job).toMatchObject({ succeeded_count: 1, failed_count: 2 });
    const [one, two, three] = (await results(saved)).results;
    expect(one).toMatchObject({ status: 'succeeded' });
    expect(two).toMatchObject({ status: 'failed', http_status: 404, error: { error_type: 'find_failed' } });
    expect(three).toMatchObject({ status: 'failed', http_status: 422, error: { errors: [expect.objectContaining({ field: 'user_id' })] } });
    expect((await api.call('GET', `/users/${user}/saved_deals`, { apiKey })).body.saved_deals).toHaveLength(1);

    const subscribed = (
      await start({
        kind: 'subscriptions',
        items: [
          { reference: 'z1', user_id: user, zip: '60601' },
          { reference: 'z2', user_id: user, zip: '1' },
        ],
      })
    ).body.bulk_job.id;
    expect((await completed(subscribed)).body.bulk_job).toMatchObject({ succeeded_count: 1, failed_count: 1 });
  });

  it('redeems coupons as PUT /coupons/:id/redeem does, each refusal that call’s', async () => {
    const caller = { call: (method: string, path: string, body?: unknown) => api.call(method, path, { body }) };
    const buyer = await buyerWithCard(caller, apiKey, 'redeemer@example.com');
    const bought = await api.call('POST', '/purchases', {
      apiKey,
      body: {
        deal_id: spaDay.id,
        quantity: 2,
        user_id: buyer.userId,
        credit_card_id: buyer.cardId,
        expected_price_per_unit: spaDay.current_price,
      },
    });
    expect(bought.status).toBe(200);
    const [first, second] = bought.body.purchase.coupons.map((c: { id: string }) => c.id);
    const id = (
      await start({
        kind: 'coupon_redemptions',
        items: [
          { reference: 'c1', coupon_id: first },
          { reference: 'c2', coupon_id: second, user_id: 'someone-else' },
          { reference: 'c3', coupon_id: 'no-such-coupon' },
        ],
      })
    ).body.bulk_job.id;
    expect((await completed(id)).body.bulk_job).toMatchObject({ succeeded_count: 1, failed_count: 2 });
    const [one, two, three] = (await results(id)).results;
    expect(one).toMatchObject({ status: 'succeeded', resource_id: first });
    const wrongUser = await api.call('PUT', `/users/someone-else/coupons/${second}/redeem`, { apiKey });
    expect(two).toMatchObject({ status: 'failed', http_status: wrongUser.status, error: wrongUser.body });
    const unknown = await api.call('PUT', '/coupons/no-such-coupon/redeem', { apiKey });
    expect(three).toMatchObject({ status: 'failed', http_status: unknown.status, error: unknown.body });
    const coupons = (await api.call('GET', `/users/${buyer.userId}/coupons`, { apiKey })).body.coupons as Array<{
      id: string;
      redeemed_at: string | null;
    }>;
    expect(coupons.find((c) => c.id === first)!.redeemed_at).toEqual(expect.any(String));
    expect(coupons.find((c) => c.id === second)!.redeemed_at).toBeNull();
  });

  it('refuses an item larger than its single call takes as that call does, and leaves its items unreadable once completed', async () => {
    const huge = { email: 'huge@example.com', partner_data: { blob: 'x'.repeat(1024 * 1024) } };
    const single = await api.call('POST', '/users', { apiKey, body: huge });
    const id = (
      await start({
        kind: 'users',
        items: [
          { reference: 'h1', ...huge },
          { reference: 'h2', email: 'small@example.com' },
        ],
      })
    ).body.bulk_job.id as string;
    expect((await completed(id)).body.bulk_job).toMatchObject({ succeeded_count: 1, failed_count: 1 });
    expect((await results(id)).results[0]).toMatchObject({ status: 'failed', http_status: single.status, error: single.body });
    // The key its items were sealed under is deleted: the log holds them no more.
    const stored = await eventually(
      () => api.get(EventStore).readStream(`bulkjob-${id}`),
      (events) => events.some((e) => e.type === 'BulkJobItemsErased'),
    );
    const added = stored.filter((e) => e.type === 'BulkJobItemsAdded');
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((e) => (e.data as { items: unknown }).items === null)).toBe(true);
    expect(JSON.stringify(stored)).not.toContain('small@example.com');
  });

  it("records an item the service keeps failing on as its call's 500 on its chunk's last run, and runs the partner's next job", async () => {
    const users = api.get(UserWrites);
    const register = users.register.bind(users);
    // A fault of the service on one item, every time it is run.
    const fault = jest.spyOn(users, 'register').mockImplementation((user, ...rest) => {
      if (user.profile.email === 'poison@example.com') return Promise.reject(new Error('a fault of the service'));
      return register(user, ...rest);
    });
    try {
      const items = ['before', 'poison', 'after'].map((name) => ({ reference: `p-${name}`, email: `${name}@example.com` }));
      const id = (await start({ kind: 'users', items })).body.bulk_job.id as string;
      const next = (await start({ kind: 'users', items: [{ reference: 'p-next', email: 'next@example.com' }] })).body.bulk_job.id as string;
      // Each arming runs the chunk three times (the scheduler's tries); the sweep a minute later arms it again: called here.
      const failedRuns = async () =>
        (await api.get(EventStore).readStream(`bulkjob-${id}`)).filter((e) => e.type === 'BulkJobChunkFailed').length;
      for (let runs = 3; runs < MAX_CHUNK_RUNS; runs += 3) {
        expect(await eventually(failedRuns, (n) => n >= runs)).toBe(runs);
        expect((await job(id)).body.bulk_job.status).toBe('running');
        await api.get(BulkJobRunner).rearm();
      }
      expect((await completed(id)).body.bulk_job).toMatchObject({ succeeded_count: 2, failed_count: 1 });
      expect(await failedRuns()).toBe(MAX_CHUNK_RUNS - 1);
      const { results: done } = await results(id);
      expect(done.map((r: { status: string }) => r.status)).toEqual(['succeeded', 'failed', 'succeeded']);
      expect(done[1]).toMatchObject({
        http_status: 500,
        error: { status: 'error', error_type: 'internal_error', error_msg: 'the service failed to answer; the failure is logged' },
      });
      expect((await completed(next)).body.bulk_job).toMatchObject({ succeeded_count: 1 });
    } finally {
      fault.mockRestore();
    }
  });

  it('cancels a queued job at once and a running one after its chunk under way; a completed one is refused 409', async () => {
    // The running job's first item waits until the test opens the gate.
    const { open, holding, spy: hold } = holdRegister('c-0@example.com');
    const settled = async (id: string): Promise<Reply> => {
      for (;;) {
        const reply = await job(id);
        if (['completed', 'cancelled'].includes(reply.body.bulk_job.status)) return reply;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const cancel = (id: string, key = apiKey) => api.call('POST', `/v1/bulk_jobs/${id}/cancel`, { apiKey: key });
    try {
      const items = Array.from({ length: 250 }, (_, i) => ({ reference: `c-${i}`, email: `c-${i}@example.com` }));
      const running = (await start({ kind: 'users', items })).body.bulk_job.id as string;
      const queued = (await start({ kind: 'users', items: [{ reference: 'c-queued', email: 'c-queued@example.com' }] })).body.bulk_job.id;
      const later = (await start({ kind: 'users', items: [{ reference: 'c-later', email: 'c-later@example.com' }] })).body.bulk_job.id;
      await holding;
      expect((await cancel(running, otherKey)).status).toBe(404);
      // Not started: cancelled at once, out of the partner's open jobs (a third may be sent).
      const off = await cancel(queued);
      expect([off.status, off.body.bulk_job]).toEqual([
        200,
        expect.objectContaining({ status: 'cancelled', processed_count: 0, cancellation_reason: 'requested' }),
      ]);
      expect(off.body.bulk_job.cancelled_at).toEqual(expect.any(String));
      const third = await start({ kind: 'users', items: [{ reference: 'c-third', email: 'c-third@example.com' }] });
      expect(third.status).toBe(202);
      // Running: cancelling until its chunk under way has its results.
      expect((await cancel(running)).body.bulk_job).toMatchObject({ status: 'cancelling', processed_count: 0 });
      open();
      expect((await settled(running)).body.bulk_job).toMatchObject({ status: 'cancelled', processed_count: 200, succeeded_count: 200 });
      expect((await results(running, '?per_page=1000')).results).toHaveLength(200);
      expect((await cancel(running)).body.bulk_job).toMatchObject({ status: 'cancelled', processed_count: 200 });
      expect((await api.call('POST', '/users', { apiKey, body: { email: 'c-249@example.com' } })).status).toBe(200);
      // The partner's next jobs run; a completed one has nothing to cancel.
      expect((await completed(later)).body.bulk_job).toMatchObject({ succeeded_count: 1 });
      const refused = await cancel(later);
      expect([refused.status, refused.body.error_type]).toEqual([409, 'bulk_job_completed']);
      expect((await completed(third.body.bulk_job.id)).body.bulk_job).toMatchObject({ succeeded_count: 1 });
      const feed = await eventually(
        async () =>
          ((await api.call('GET', '/v1/events?per_page=1000', { apiKey })).body.events as Array<Record<string, unknown>>).filter(
            (e) => e.type === 'bulk_job.completed' && e.resource_id === running,
          ),
        (said) => said.length > 0,
      );
      expect(feed).toEqual([expect.objectContaining({ data: expect.objectContaining({ id: running, status: 'cancelled' }) })]);
    } finally {
      open();
      hold.mockRestore();
    }
  });

  it('cancels the open jobs a revoked key sent (credential_revoked), and runs to the end those of a key that expired as planned', async () => {
    const partner = await api.createPartner('Leaky keys');
    const commands = api.get(CommandBus);
    const spare = await commands.execute(new IssuePartnerApiKey(partner.partnerId, 'spare', OPERATOR));
    await api.settle();
    const { open, holding, spy: hold } = holdRegister('r-0@example.com');
    const jobOf = async (id: string) => (await job(id, spare.apiKey)).body.bulk_job;
    try {
      const items = Array.from({ length: 250 }, (_, i) => ({ reference: `r-${i}`, email: `r-${i}@example.com` }));
      const running = (await start({ kind: 'users', items }, partner.apiKey)).body.bulk_job.id as string;
      const queued = (await start({ kind: 'users', items: [{ reference: 'r-q', email: 'r-q@example.com' }] }, partner.apiKey)).body.bulk_job
        .id;
      const bySpare = (await start({ kind: 'users', items: [{ reference: 'r-s', email: 'r-s@example.com' }] }, spare.apiKey)).body.bulk_job
        .id;
      await holding;
      await commands.execute(new RevokePartnerApiKey(partner.partnerId, partner.keyId, OPERATOR));
      await api.settle();
      // Queued: cancelled at once; running: cancelling until its chunk under way has its results.
      expect(
        await eventually(
          () => jobOf(queued),
          (j) => j.status === 'cancelled',
        ),
      ).toMatchObject({
        status: 'cancelled',
        processed_count: 0,
        cancellation_reason: 'credential_revoked',
        cancelled_at: expect.any(String),
      });
      expect(await jobOf(running)).toMatchObject({ status: 'cancelling', cancellation_reason: 'credential_revoked' });
      open();
      expect(
        await eventually(
          () => jobOf(running),
          (j) => j.status === 'cancelled',
        ),
      ).toMatchObject({
        status: 'cancelled',
        processed_count: 200,
        cancellation_reason: 'credential_revoked',
      });
      // The other key's job runs.
      expect(
        await eventually(
          () => jobOf(bySpare),
          (j) => j.status === 'completed',
        ),
      ).toMatchObject({
        succeeded_count: 1,
        cancellation_reason: null,
      });
    } finally {
      open();
      hold.mockRestore();
    }
    // The spare key rotated with an hour's grace: its job, accepted while it worked, runs past its expiry.
    const second = holdRegister('e-0@example.com');
    try {
      const rotated = await commands.execute(new RotatePartnerApiKey(partner.partnerId, spare.keyId, later(HOUR), OPERATOR));
      await api.settle();
      const items = Array.from({ length: 250 }, (_, i) => ({ reference: `e-${i}`, email: `e-${i}@example.com` }));
      const expiring = (await start({ kind: 'users', items }, spare.apiKey)).body.bulk_job.id as string;
      await second.holding;
      clock.advance(2 * HOUR);
      // The key is refused once this process's moment of trust in it (real time, not the clock's) has passed.
      expect(
        (
          await eventually(
            () => job(expiring, spare.apiKey),
            (answer) => answer.status !== 200,
          )
        ).status,
      ).toBe(401);
      second.open();
      const done = await eventually(
        async () => (await job(expiring, rotated.apiKey)).body.bulk_job,
        (j) => j.status === 'completed',
      );
      expect(done).toMatchObject({ status: 'completed', succeeded_count: 250, cancelled_at: null, cancellation_reason: null });
    } finally {
      second.open();
      second.spy.mockRestore();
    }
  });

  it("cancels a revoked key's queued job when its turn comes if its cancellation at the revocation was missed", async () => {
    const partner = await api.createPartner('Missed revocation');
    const commands = api.get(CommandBus);
    const spare = await commands.execute(new IssuePartnerApiKey(partner.partnerId, 'spare', OPERATOR));
    await api.settle();
    // The process that folded the revocation stopped before cancelling: nothing is cancelled then.
    const missed = jest.spyOn(api.get(CancelRevokedKeyJobs), 'cancelJobsOf').mockResolvedValue(undefined);
    const { open, holding, spy: hold } = holdRegister('m-0@example.com');
    try {
      const first = (await start({ kind: 'users', items: [{ reference: 'm-0', email: 'm-0@example.com' }] }, spare.apiKey)).body.bulk_job
        .id as string;
      const revoked = (await start({ kind: 'users', items: [{ reference: 'm-1', email: 'm-1@example.com' }] }, partner.apiKey)).body
        .bulk_job.id as string;
      await holding;
      await commands.execute(new RevokePartnerApiKey(partner.partnerId, partner.keyId, OPERATOR));
      await api.settle();
      expect(missed).toHaveBeenCalled();
      expect((await job(revoked, spare.apiKey)).body.bulk_job.status).toBe('queued');
      open();
      const jobOf = async (id: string) => (await job(id, spare.apiKey)).body.bulk_job;
      expect(
        await eventually(
          () => jobOf(first),
          (j) => j.status === 'completed',
        ),
      ).toMatchObject({ succeeded_count: 1 });
      expect(
        await eventually(
          () => jobOf(revoked),
          (j) => j.status === 'cancelled',
        ),
      ).toMatchObject({
        status: 'cancelled',
        processed_count: 0,
        cancellation_reason: 'credential_revoked',
      });
    } finally {
      open();
      hold.mockRestore();
      missed.mockRestore();
    }
  });

  /** Holds the first registration of `email` until `open` (with `fail`: then a fault of the service). */
  function holdRegister(email: string) {
    const users = api.get(UserWrites);
    const register = users.register.bind(users);
    let open!: (fail?: boolean) => void;
    const gate = new Promise<boolean>((resolve) => (open = (fail = false) => resolve(fail)));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    let first = true;
    const spy = jest.spyOn(users, 'register').mockImplementation(async (user, ...rest) => {
      if (user.profile.email === email && first) {
        first = false;
        held();
        if (await gate) throw new Error('a fault of the service');
      }
      return register(user, ...rest);
    });
    return { open, holding, spy };
  }

  it('runs each item once when its job is armed again while a chunk runs (another job accepted meanwhile)', async () => {
    const bulkItems = api.get(BulkItems);
    const run = bulkItems.run.bind(bulkItems);
    // Every job's runs, by job: the job's first items may run before its 202 is read here.
    const runsOf = new Map<string, Map<number, number>>();
    const count = jest.spyOn(bulkItems, 'run').mockImplementation((kind, item, last) => {
      const runs = runsOf.get(item.jobId) ?? runsOf.set(item.jobId, new Map()).get(item.jobId)!;
      runs.set(item.index, (runs.get(item.index) ?? 0) + 1);
      return run(kind, item, last);
    });
    const hold = holdRegister('d-0@example.com');
    try {
      const items = Array.from({ length: 600 }, (_, i) => ({ reference: `d-${i}`, email: `d-${i}@example.com` }));
      const jobId = (await start({ kind: 'users', items })).body.bulk_job.id as string;
      await hold.holding;
      // Accepted while chunk 0 runs: the first job's next step is armed again, to run once chunk 0 has ended.
      const other = (await start({ kind: 'users', items: [{ reference: 'd-other', email: 'd-other@example.com' }] })).body.bulk_job.id;
      hold.open();
      expect((await completed(jobId)).body.bulk_job).toMatchObject({ succeeded_count: 600 });
      expect((await completed(other)).body.bulk_job).toMatchObject({ succeeded_count: 1 });
      const runs = runsOf.get(jobId)!;
      expect([...runs.values()].filter((n) => n !== 1)).toEqual([]);
      expect(runs.size).toBe(600);
    } finally {
      hold.open();
      hold.spy.mockRestore();
      count.mockRestore();
    }
  });

  it('records the items its chunk under way did when a cancelled job’s chunk fails, run again before it completes', async () => {
    const hold = holdRegister('e-0@example.com');
    try {
      const items = Array.from({ length: 250 }, (_, i) => ({ reference: `e-${i}`, email: `e-${i}@example.com` }));
      const id = (await start({ kind: 'users', items })).body.bulk_job.id as string;
      await hold.holding;
      expect((await api.call('POST', `/v1/bulk_jobs/${id}/cancel`, { apiKey })).body.bulk_job).toMatchObject({ status: 'cancelling' });
      hold.open(true);
      for (;;) {
        const reply = await job(id);
        if (reply.body.bulk_job.status === 'cancelled') {
          expect(reply.body.bulk_job).toMatchObject({ processed_count: 200, succeeded_count: 200 });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      hold.open();
      hold.spy.mockRestore();
    }
  });

  it("runs a sandbox's job on the sandbox's own records", async () => {
    const accepted = await start({ kind: 'users', items: [{ reference: 't1', email: 'sandbox@example.com' }] }, testKey);
    expect(accepted.body.bulk_job.livemode).toBe(false);
    const id = accepted.body.bulk_job.id as string;
    expect((await completed(id, testKey)).body.bulk_job).toMatchObject({ succeeded_count: 1 });
    expect((await job(id)).status).toBe(404);
    const made = (await api.call('GET', `/v1/bulk_jobs/${id}/results`, { apiKey: testKey })).body.results[0].resource_id;
    expect((await api.call('GET', `/users/${made}`, { apiKey: testKey })).status).toBe(200);
    expect((await api.call('GET', `/users/${made}`, { apiKey })).status).toBe(404);
  });

  it('refuses a job that is not one: no items, too many, a repeated reference, an unknown kind', async () => {
    const refused = async (body: unknown, field: string) => {
      const reply = await start(body);
      expect(reply.status).toBe(422);
      expect(reply.body).toMatchObject({ status: 'error', error_type: 'validation_failed' });
      expect(reply.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    };
    await refused({ kind: 'users', items: [] }, 'items');
    await refused({ kind: 'users', items: Array.from({ length: 10_001 }, (_, i) => ({ reference: `r${i}` })) }, 'items');
    await refused({ kind: 'users', items: [{ reference: 'a' }, { reference: 'a' }] }, 'items.1.reference');
    await refused({ kind: 'refunds', items: [{ reference: 'a' }] }, 'kind');
    await refused({ kind: 'users', items: [{ reference: 'a\u0000b' }] }, 'items.0.reference');
    await refused({ kind: 'users', items: [{ reference: '\ud800' }] }, 'items.0.reference');
    await refused({ kind: 'users', items: [{ reference: 'ana@example.com' }] }, 'items.0.reference');
  });
});
