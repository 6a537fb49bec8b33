import { EventStore, handleCommand, ManualClock, OPERATOR, ViewStore } from '@deals/kernel';
import { USER_ACCOUNTS, UserAccount } from '@deals/accounts/projections/user-accounts/user-accounts.projection';
import { emailClaimDecider, emailClaimStream } from '@deals/accounts/domain/user/email-claim.decider';
import { emailKey } from '@deals/accounts/domain/user/user.events';
import { UserWrites } from '@deals/accounts/commands/user-writes';
import { TestApi } from '../../support/api-harness';

/** Found by an adversarial review: an email shared by two users, and addresses left claimed by updates that failed or lost a race. */
describe("email addresses stay one user's, under concurrency and refused updates", () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let partnerId: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    ({ apiKey, partnerId } = await api.createPartner());
  });
  afterAll(() => api.close());

  const post = (body: unknown) => api.call('POST', '/users', { apiKey, body });
  const put = (id: string, body: unknown) => api.call('PUT', `/users/${id}`, { apiKey, body });
  const byEmail = (email: string, body: unknown) =>
    api.call('PUT', `/api/v1/users/${encodeURIComponent(email)}/update_by_email`, { apiKey, body });
  const firstName = async (id: string) => (await api.call('GET', `/users/${id}`, { apiKey })).body.user.firstname;

  it('makes one user of registrations sent at once with one email; the others are told it is taken', async () => {
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(Array.from({ length: 8 }, () => post({ email: `same-${round}@claims.test` })));
      expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of replies.filter((r) => r.status !== 200)) {
        expect([r.status, r.body.errors]).toEqual([
          422,
          [{ type: 'invalid', resource: 'user', field: 'email', message: 'is already taken by another user' }],
        ]);
      }
    }
  });

  it('makes one user of an address written composed or decomposed, in any case (NFC, case-folded), and keeps it as given', async () => {
    const composed = 'caf\u00e9@claims.test';
    const first = await post({ email: composed });
    expect(first.status).toBe(200);
    for (const email of ['cafe\u0301@claims.test', 'CAFE\u0301@Claims.Test', 'CAF\u00c9@claims.test']) {
      const again = await post({ email });
      expect([again.status, again.body.errors?.[0]?.message]).toEqual([422, 'is already taken by another user']);
    }
    const stored = await api.get(ViewStore).findById<UserAccount>(USER_ACCOUNTS, first.body.user_id);
    expect(stored?.profile.email).toBe(composed);
    const found = await byEmail('cafe\u0301@claims.test', { first_name: 'Found' });
    expect([found.status, await firstName(first.body.user_id)]).toEqual([200, 'Found']);
    expect(emailKey('STRASSE@claims.test')).toBe(emailKey('stra\u00dfe@claims.test'));
  });

  it('still finds an address outside ASCII claimed under its key of before (its lower case only)', async () => {
    const decomposed = 'jose\u0301@claims.test';
    const owner = 'claimed-before';
    const caller = { ...OPERATOR, partnerId };
    // A user and claim as written before addresses were folded: the claim under the lower case.
    await api.get(UserWrites).register({ profile: { email: decomposed }, sessionId: null }, true, caller, owner);
    const stream = emailClaimStream(partnerId, emailKey(decomposed));
    const store = api.get(EventStore);
    await handleCommand(
      store,
      stream,
      emailClaimDecider,
      { type: 'ReleaseEmail', data: { partnerId, emailKey: emailKey(decomposed), userId: owner } },
      { now: clock.now(), metadata: caller },
    );
    const legacy = decomposed.toLowerCase();
    await handleCommand(
      store,
      emailClaimStream(partnerId, legacy),
      emailClaimDecider,
      { type: 'ClaimEmail', data: { partnerId, emailKey: legacy, userId: owner } },
      { now: clock.now(), metadata: caller },
    );
    await api.settle();
    expect((await post({ email: decomposed })).status).toBe(422);
    expect((await post({ email: 'JOSE\u0301@claims.test' })).status).toBe(422);
    expect(await api.get(UserWrites).owner(partnerId, 'Jose\u0301@Claims.test')).toBe(owner);
  });

  it('leaves no claim behind for an update the user refuses (a deleted user)', async () => {
    const carol = (await post({ email: 'carol@claims.test' })).body.user_id;
    await put(carol, { is_deleted: true });
    const refused = await put(carol, { email: 'dave@claims.test' });
    expect(refused.status).toBe(422);
    expect((await post({ email: 'dave@claims.test', first_name: 'Dave' })).status).toBe(200);
  });

  it("keeps an address one user's when one user changes it three times at once; the addresses it lost are not its own", async () => {
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

  it("runs one user's email changes sent at once one after another: the address it gave up is free at once, the one it holds stays taken", async () => {
    const sam = (await post({ email: 'sam@claims.test' })).body.user_id;
    await Promise.all([put(sam, { email: 'sam1@claims.test' }), put(sam, { email: 'sam2@claims.test' })]);
    const statuses = [(await post({ email: 'sam1@claims.test' })).status, (await post({ email: 'sam2@claims.test' })).status];
    expect(statuses.sort()).toEqual([200, 422]);
    expect((await post({ email: 'sam@claims.test' })).status).toBe(200);
  });

  it("keeps both addresses one user's each when one user flips between them many times at once", async () => {
    for (let round = 0; round < 4; round++) {
      const [a, b] = [`flip${round}a@claims.test`, `flip${round}b@claims.test`];
      const flipper = (await post({ email: a })).body.user_id;
      await Promise.all(Array.from({ length: 12 }, (_, i) => put(flipper, { email: i % 2 ? b : a })));
      // The address the user holds stays taken; the other is free.
      const statuses = [(await post({ email: a })).status, (await post({ email: b })).status];
      expect(statuses.sort()).toEqual([200, 422]);
    }
  });

  it('makes one user of update_by_email calls sent at once for a new email, each updating it', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => byEmail('together@claims.test', { first_name: `N${i}` })));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(replies.map((r) => r.body.user.id)).size).toBe(1);
  });

  it('keeps the token rule when update_by_email calls with different tokens arrive at once: one token is set, the others refused', async () => {
    await post({ email: 'tokens@claims.test' });
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => byEmail('tokens@claims.test', { token: `t${i}` })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expect([r.status, r.body.error_type]).toEqual([422, 'update_failed']);
  });

  it('writes a registration refused by its user stream (an id already registered) with no claim of its address', async () => {
    const kept = (await post({ email: 'kept@claims.test' })).body.user_id;
    const caller = { ...OPERATOR, partnerId };
    const again = api.get(UserWrites).register({ profile: { email: 'never@claims.test' }, sessionId: null }, true, caller, kept);
    await expect(again).rejects.toMatchObject({ issues: [expect.objectContaining({ field: 'id', message: 'is already registered' })] });
    expect(await api.get(EventStore).readStream(emailClaimStream(partnerId, emailKey('never@claims.test')))).toEqual([]);
    expect((await post({ email: 'never@claims.test' })).status).toBe(200);
  });

  it('refuses addresses with control characters or over 254 characters', async () => {
    for (const email of ['nul\u0000@claims.test', `${'a'.repeat(250)}@x.test`]) {
      const reply = await post({ email });
      expect([reply.status, reply.body.errors?.[0]?.field]).toEqual([422, 'email']);
    }
  });

  it('gives an address whose claim no user holds (a registration that stopped) to another user once the claim is a minute old, not before', async () => {
    await handleCommand(
      api.get(EventStore),
      emailClaimStream(partnerId, emailKey('stopped@claims.test')),
      emailClaimDecider,
      {
        type: 'ClaimEmail',
        data: { partnerId, emailKey: emailKey('stopped@claims.test'), userId: 'registration-that-stopped' },
      },
      { now: clock.now(), metadata: OPERATOR },
    );
    expect((await post({ email: 'stopped@claims.test' })).status).toBe(422);
    clock.advance(61_000);
    expect((await post({ email: 'stopped@claims.test' })).status).toBe(200);
  });
});
