import { SqliteIdempotencyStore } from '@deals/adapters/idempotency-store/sqlite-idempotency-store.adapter';
import Fastify from 'fastify';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/temp-dir';
import { answerRepeatedRequests, canonicalJson, MAX_KEPT_ANSWER_BYTES } from './idempotency-keys';
import type { AuthenticatedRequest } from './authenticated-request';

describe('canonicalJson: what makes two bodies the same request', () => {
  it('orders object keys, at every depth, and leaves arrays in their order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: 'x' } })).toBe(canonicalJson({ a: { c: 'x', d: [2, 1] }, b: 1 }));
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });

  it('tells apart values JSON tells apart, and no body from an empty one', () => {
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({}));
    expect(canonicalJson(undefined)).not.toBe(canonicalJson({}));
    expect(canonicalJson({ 'a"b': 1 })).toBe('{"a\\"b":1}');
  });
});

describe('answers kept for repeats: bounded in size and per partner', () => {
  const dir = tempDir('kept-answers');
  const store = new SqliteIdempotencyStore(join(dir.path, 'idempotency.sqlite'));
  const notKept: string[] = [];
  const app = Fastify();
  const MAX_PER_PARTNER = 64 * 1024;
  beforeAll(async () => {
    app.addHook('onRequest', async (request) => {
      (request as AuthenticatedRequest).partner = {
        id: String(request.headers['x-partner']),
        name: '',
        role: 'partner',
        requestsPerMinute: null,
        livemode: true,
      };
    });
    answerRepeatedRequests(app, {
      store: () => store,
      now: () => Date.now(),
      keepMs: 3_600_000,
      maxBytesPerPartner: MAX_PER_PARTNER,
      secret: Buffer.alloc(32, 7),
      onRecordFailed: (error) => {
        throw error;
      },
      onNotKept: (reason, _request, partnerId) => notKept.push(`${partnerId}:${reason}`),
    });
    app.post('/bytes/:n', async (request) => ({ text: 'x'.repeat(Number((request.params as { n: string }).n)) }));
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    dir.remove();
  });
  const post = (n: number, key: string, partner = 'p-a') =>
    app.inject({ method: 'POST', url: `/bytes/${n}`, headers: { 'idempotency-key': key, 'x-partner': partner } });

  it('replays an answered request to every one of its repeats sent at once', async () => {
    const first = await post(10, 'answered');
    const repeats = await Promise.all(Array.from({ length: 6 }, () => post(10, 'answered')));
    expect(repeats.map((r) => [r.statusCode, r.headers['idempotent-replayed'], r.body])).toEqual(
      Array.from({ length: 6 }, () => [200, 'true', first.body]),
    );
  });

  it('answers the first request in full and a repeat with a refusal saying so, for an answer over the size kept', async () => {
    const first = await post(MAX_KEPT_ANSWER_BYTES + 1, 'big');
    expect(first.statusCode).toBe(200);
    expect(first.body.length).toBeGreaterThan(MAX_KEPT_ANSWER_BYTES);
    const again = await post(MAX_KEPT_ANSWER_BYTES + 1, 'big');
    expect(again.statusCode).toBe(422);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toMatchObject({ error_type: 'idempotent_answer_not_kept', answered_status: 200 });
    expect(again.json().error_msg).toContain('larger than');
    expect(notKept).toEqual(['p-a:size']);
  });

  it("keeps a partner's answers up to its share of the store, then the notices of answers not kept, then refuses its new keys", async () => {
    notKept.length = 0;
    const statuses: number[] = [];
    for (let i = 0; i < 100 && statuses.at(-1) !== 429; i++) statuses.push((await post(10_000, `fill-${i}`, 'p-b')).statusCode);
    expect(statuses.at(-1)).toBe(429);
    // Six answers of ~10 KB fit in 64 KiB; the next ones run, and what is kept of them is a notice
    // saying so, until the share is full and a new key is refused before anything runs.
    expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
    expect(store.keptBytes().get('p-b')!).toBeLessThanOrEqual(MAX_PER_PARTNER + 10_100);
    expect((await post(10_000, 'fill-0', 'p-b')).headers['idempotent-replayed']).toBe('true');
    expect((await post(10_000, 'fill-0', 'p-b')).statusCode).toBe(200);
    const notice = await post(10_000, 'fill-7', 'p-b');
    expect([notice.statusCode, notice.json().error_type]).toEqual([422, 'idempotent_answer_not_kept']);
    expect(notice.json().error_msg).toContain('limit');
    const refused = await post(10_000, 'one more', 'p-b');
    expect([refused.statusCode, refused.json().error_type, refused.headers['retry-after']]).toEqual([429, 'idempotency_keys_full', '900']);
    expect(new Set(notKept)).toEqual(new Set(['p-b:partner_full']));
    // Another partner keeps its answers.
    const other = await post(10_000, 'other', 'p-c');
    expect((await post(10_000, 'other', 'p-c')).body).toBe(other.body);
  });
});
