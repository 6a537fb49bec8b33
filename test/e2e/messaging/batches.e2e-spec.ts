import { EventStore, ManualClock } from '@deals/kernel';
import { BatchDelivery } from '@deals/messaging';
import { Reply, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';

describe('targeted-email batches: POST, GET and DELETE /v1/targeted_email/batches', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let partnerId: string;
  let otherKey: string;
  let users: string[];
  let foreign: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    ({ apiKey, partnerId } = await api.createPartner());
    otherKey = (await api.createPartner('Other')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      spaDay,
      { ...spaDay, id: 'spa-approved', state: 'approved', start_at: '2026-06-16T06:00:00Z' },
      { ...spaDay, id: 'spa-paused', state: 'paused' },
      { ...spaDay, id: 'spa-ends-tomorrow', end_at: '2026-06-16T10:00:00Z' },
    ]);
    users = [];
    for (let i = 0; i < 6; i++)
      users.push((await api.call('POST', '/users', { apiKey, body: { email: `b${i}@example.com` } })).body.user_id);
    foreign = (await api.call('POST', '/users', { apiKey: otherKey, body: { email: 'f@example.com' } })).body.user_id;
  });
  afterAll(() => api.close());

  const create = (body: Record<string, unknown>, key = apiKey) => api.call('POST', '/v1/targeted_email/batches', { apiKey: key, body });
  const get = (id: string, dealId?: string, key = apiKey) =>
    api.call('GET', `/v1/targeted_email/batches/${id}${dealId === undefined ? '' : `?deal_id=${dealId}`}`, { apiKey: key });
  const cancel = (id: string, dealId?: string, key = apiKey) =>
    api.call('DELETE', `/v1/targeted_email/batches/${id}${dealId === undefined ? '' : `?deal_id=${dealId}`}`, { apiKey: key });
  const batch = (extra: Record<string, unknown> = {}) => ({
    deal_id: 'chicago-spa-day',
    user_ids: [users[0], users[1]],
    mode: 'suppress',
    send_at: '2026-06-16T09:00:00Z',
    ...extra,
  });
  const refused = (reply: Reply, entries: Array<[string, string]>) => {
    expect(reply.status).toBe(422);
    expect(reply.body).toMatchObject({ status: 'error', error_type: 'validation_failed' });
    expect(reply.body.errors.map((e: { field: string; message: string }) => [e.field, e.message])).toEqual(entries);
  };

  it('schedules a batch: 201 {status, batch} with every field of a batch, pending; GET answers it', async () => {
    const reply = await create(batch({ send_at: '2026-06-16T09:00:00Z', user_ids: [users[2]] }));
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      status: 'success',
      batch: {
        id: expect.any(String),
        deal_id: 'chicago-spa-day',
        user_ids: [users[2]],
        mode: 'suppress',
        send_at: '2026-06-16T09:00:00Z',
        status: 'pending',
      },
    });
    expect((await get(reply.body.batch.id, 'chicago-spa-day')).body).toEqual(reply.body);
  });

  it('drops unknown, foreign and already scheduled users, and keeps the batch while one remains', async () => {
    const first = await create(batch({ user_ids: [users[3], 'nobody', foreign], send_at: '2026-06-16T01:00:00Z', mode: 'augment' }));
    expect(first.body.batch.user_ids).toEqual([users[3]]);
    const second = await create(batch({ user_ids: [users[3], users[4], users[4]], send_at: '2026-06-16T23:59:59Z' }));
    expect(second.body.batch.user_ids).toEqual([users[4]]);
    refused(await create(batch({ user_ids: [users[3], users[4]] })), [['user_ids', 'are all already scheduled for that day']]);
    refused(await create(batch({ user_ids: ['nobody', foreign] })), [['user_ids', 'are all invalid']]);
    // Cancelled, its users are free again for that day.
    await cancel(second.body.batch.id, 'chicago-spa-day');
    expect((await create(batch({ user_ids: [users[4]] }))).status).toBe(201);
  });

  it('never keeps a user in two batches of one day, however many are created at once', async () => {
    const racer = (await api.call('POST', '/users', { apiKey, body: { email: 'racer@example.com' } })).body.user_id;
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => create(batch({ user_ids: [racer], send_at: `2026-06-16T1${i % 10}:00:00Z` }))),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) refused(r, [['user_ids', 'are all already scheduled for that day']]);
  });

  it('refuses with every fixed message that applies, several at once', async () => {
    refused(await create({}), [
      ['deal_id', 'is required'],
      ['user_ids', 'is required'],
      ['mode', 'is required'],
      ['send_at', 'is required'],
    ]);
    expect((await create({})).body.errors[0]).toMatchObject({ type: 'missing_field', resource: 'batch' });
    refused(await create(batch({ mode: 'loud' })), [['mode', 'must be either (suppress or augment)']]);
    refused(await create(batch({ deal_id: 'nope', send_at: '2026-06-15T13:00:00Z' })), [
      ['deal_id', 'unknown deal'],
      ['send_at', 'must be tomorrow'],
    ]);
    refused(await create(batch({ deal_id: 'spa-paused' })), [['deal_id', "deal's status must be in-flight or approved"]]);
    refused(await create(batch({ deal_id: 'spa-approved', send_at: '2026-06-16T05:59:59Z' })), [
      ['send_at', "must be after deal's start time"],
    ]);
    expect((await create(batch({ deal_id: 'spa-approved', send_at: '2026-06-16T06:00:00Z', user_ids: [users[5]] }))).status).toBe(201);
    refused(await create(batch({ deal_id: 'spa-ends-tomorrow', send_at: '2026-06-16T10:00:00Z' })), [
      ['send_at', "must be before deal's end time"],
    ]);
    refused(await create(batch({ user_ids: Array.from({ length: 1001 }, (_, i) => `u${i}`) })), [
      ['user_ids', 'must name at most 1000 users'],
    ]);
    refused(await create(batch({ user_ids: 'u1' })), [['user_ids', 'must be an array of user ids (strings)']]);
    refused(await create(batch({ send_at: 'tomorrow' })), [['send_at', 'must be an ISO 8601 time, UTC (2026-06-16T09:00:00Z)']]);
  });

  it('takes send_at from tonight’s midnight (inclusive) to tomorrow’s (exclusive)', async () => {
    const u = (await api.call('POST', '/users', { apiKey, body: { email: 'edge@example.com' } })).body.user_id;
    refused(await create(batch({ user_ids: [u], send_at: '2026-06-15T23:59:59Z' })), [['send_at', 'must be tomorrow']]);
    refused(await create(batch({ user_ids: [u], send_at: '2026-06-17T00:00:00Z' })), [['send_at', 'must be tomorrow']]);
    expect((await create(batch({ user_ids: [u], send_at: '2026-06-16T00:00:00Z' }))).status).toBe(201);
  });

  it('guards GET and DELETE with deal_id; an unknown or foreign batch is 404', async () => {
    const u = (await api.call('POST', '/users', { apiKey, body: { email: 'guard@example.com' } })).body.user_id;
    const id = (await create(batch({ user_ids: [u] }))).body.batch.id;
    for (const call of [get, cancel]) {
      refused(await call(id), [['deal_id', 'is required']]);
      refused(await call(id, 'nope'), [['deal_id', 'unknown deal']]);
      refused(await call(id, 'spa-paused'), [['deal_id', 'does not match this batch']]);
      expect((await call('nope', 'chicago-spa-day')).status).toBe(404);
      expect((await call(id, 'chicago-spa-day', otherKey)).body).toMatchObject({ status: 'error', error_type: 'find_failed' });
    }
    const cancelled = await cancel(id, 'chicago-spa-day');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.batch.status).toBe('cancelled');
    expect((await cancel(id, 'chicago-spa-day')).body.batch.status).toBe('cancelled');
    expect((await get(id, 'chicago-spa-day')).body.batch.status).toBe('cancelled');
  });

  it('refuses to cancel a batch being sent or sent: "is already processed, cannot be cancelled"', async () => {
    const u = (await api.call('POST', '/users', { apiKey, body: { email: 'late@example.com' } })).body.user_id;
    const id = (await create(batch({ user_ids: [u], send_at: '2026-06-16T08:00:00Z' }))).body.batch.id;
    // Delivered at its send_at (the job's work, run here at once), then the clock is put back.
    clock.set('2026-06-16T09:00:00Z');
    try {
      expect(await api.get(BatchDelivery).deliver(id, partnerId, '2026-06-16')).toEqual({ outcome: 'delivered' });
    } finally {
      clock.set('2026-06-15T12:00:00Z');
    }
    expect((await api.get(EventStore).readStream(`batch-${id}`)).map((e) => e.type)).toEqual(['BatchRecipientSent', 'BatchDelivered']);
    refused(await cancel(id, 'chicago-spa-day'), [['batch_id', 'is already processed, cannot be cancelled']]);
    expect((await get(id, 'chicago-spa-day')).body.batch.status).toBe('processed');
  });
});
