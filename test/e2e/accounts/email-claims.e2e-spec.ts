import { ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';

/** Found by an adversarial review: an email shared by two users, and addresses left claimed by updates that failed or lost a race. */
describe('email addresses stay one user\'s, under concurrency and refused updates', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
  });
  afterAll(() => api.close());

  const post = (body: unknown) => api.call('POST', '/users', { apiKey, body });
  const put = (id: string, body: unknown) => api.call('PUT', `/users/${id}`, { apiKey, body });
  const byEmail = (email: string, body: unknown) => api.call('PUT', `/api/v1/users/${encodeURIComponent(email)}/update_by_email`, { apiKey, body });
  const firstName = async (id: string) => (await api.call('GET', `/users/${id}`, { apiKey })).body.user.firstname;

  it('makes one user of registrations sent at once with one email; the others are told it is taken', async () => {
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(Array.from({ length: 8 }, () => post({ email: `same-${round}@claims.test` })));
      expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of replies.filter((r) => r.status !== 200)) {
        expect([r.status, r.body.errors]).toEqual([422, [{ type: 'invalid', resource: 'user', field: 'email', message: 'is already taken by another user' }]]);
      }
    }
  });

  it('leaves no claim behind for an update the user refuses (a deleted user)', async () => {
    const carol = (await post({ email: 'carol@claims.test' })).body.user_id;
    await put(carol, { is_deleted: true });
    const refused = await put(carol, { email: 'dave@claims.test' });
    expect(refused.status).toBe(422);
    expect((await post({ email: 'dave@claims.test', first_name: 'Dave' })).status).toBe(200);
  });

  it('keeps an address one user\'s when one user changes it three times at once; the addresses it lost are not its own', async () => {
    const rae = (await post({ email: 'rae@claims.test', first_name: 'Rae' })).body.user_id;
    const replies = await Promise.all(['race1', 'race2', 'race3'].map((name) => put(rae, { email: `${name}@claims.test` })));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    // update_by_email reaches the user by its current address only.
    const reached: string[] = [];
    clock.advance(61_000);
    for (const name of ['race1', 'race2', 'race3']) {
      const reply = await byEmail(`${name}@claims.test`, { first_name: `By ${name}` });
      expect(reply.status).toBe(200);
      if (reply.body.user.id === rae) reached.push(name);
    }
    expect(reached).toHaveLength(1);
    expect(await firstName(rae)).toBe(`By ${reached[0]}`);
    // The other two addresses went to new users (their stale claims, a minute old, were released).
  });

  it('gives an address claimed by an update that lost its race to another user only once the claim is a minute old', async () => {
    const sam = (await post({ email: 'sam@claims.test' })).body.user_id;
    await Promise.all([put(sam, { email: 'sam1@claims.test' }), put(sam, { email: 'sam2@claims.test' })]);
    const current = (await byEmail('sam1@claims.test', {})).body.user?.id === sam ? 'sam1' : 'sam2';
    const lost = current === 'sam1' ? 'sam2' : 'sam1';
    expect((await post({ email: `${lost}@claims.test` })).status).toBe(422);
    clock.advance(61_000);
    expect((await post({ email: `${lost}@claims.test` })).status).toBe(200);
    expect((await post({ email: `${current}@claims.test` })).status).toBe(422);
  });
});
