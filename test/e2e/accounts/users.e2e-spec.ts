import { TestApi } from '../../support/api-harness';

describe('users: POST /users, GET and PUT /users/:user_id, update_by_email', () => {
  let api: TestApi;
  let apiKey: string;
  beforeAll(async () => {
    api = await TestApi.start();
    apiKey = (await api.createPartner()).apiKey;
  });
  afterAll(() => api.close());

  const post = (body: unknown) => api.call('POST', '/users', { apiKey, body });
  const get = (id: string) => api.call('GET', `/users/${id}`, { apiKey });
  const put = (id: string, body: unknown) => api.call('PUT', `/users/${id}`, { apiKey, body });
  const byEmail = (email: string, body: unknown, overwrite = false) =>
    api.call('PUT', `/api/v1/users/${encodeURIComponent(email)}/update_by_email${overwrite ? '?overwrite_token=true' : ''}`, {
      apiKey,
      body,
    });

  it('creates a user, answering its id, and shows it', async () => {
    const created = await post({
      email: 'ann@example.com',
      first_name: 'Ann',
      last_name: 'Lee',
      birthday: '1990-04-01',
      postal_code: '60601',
      token: 'partner-1',
      credits: 1200,
      partner_data: { tier: 'gold' },
      session_id: 's-1',
      source: 'web',
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ status: 'success', user_id: expect.any(String) });
    const shown = await get(created.body.user_id);
    expect(shown.body).toEqual({
      status: 'success',
      user: {
        id: created.body.user_id,
        firstname: 'Ann',
        lastname: 'Lee',
        image_url: 'https://deals.example.com/images/users/default-avatar.png',
        points: 1200,
        token: 'partner-1',
      },
    });
  });

  it('gives the configured signup credit when no credits are sent', async () => {
    const { body } = await post({ email: 'bob@example.com' });
    expect((await get(body.user_id)).body.user).toMatchObject({ points: 500, firstname: '', token: null });
  });

  it('keeps emails unique per partner, case-insensitively', async () => {
    await post({ email: 'Dup@Example.com' });
    const again = await post({ email: 'dup@example.COM' });
    expect(again.status).toBe(422);
    expect(again.body).toMatchObject({
      error_type: 'validation_failed',
      errors: [{ type: 'invalid', resource: 'user', field: 'email', message: 'is already taken by another user' }],
    });
  });

  it('refuses partner_data nested deeper than 32 levels (a rebuild walking it overflowed its stack)', async () => {
    const nest = (levels: number) => {
      let value: unknown = 1;
      for (let i = 1; i < levels; i++) value = [value];
      return { d: value };
    };
    expect((await post({ email: 'deep-ok@example.com', partner_data: nest(31) })).status).toBe(200);
    for (const levels of [33, 60]) {
      const deep = await post({ email: `deep-${levels}@example.com`, partner_data: nest(levels) });
      expect([deep.status, deep.body.errors]).toEqual([
        422,
        [{ type: 'invalid', resource: 'user', field: 'partner_data', message: 'must nest at most 32 levels deep' }],
      ]);
    }
    // A body deeper than the service reads at all is refused before anything walks it.
    const deepest = await post({ email: 'deep-1000@example.com', partner_data: nest(1000) });
    expect([deepest.status, deepest.body.error_type]).toEqual([400, 'bad_request']);
  });

  it('refuses bad fields, one entry each', async () => {
    const reply = await post({
      email: 'not-an-email',
      birthday: '2999-01-01',
      postal_code: 'abc',
      credits: -5,
      partner_data: 'x',
      first_name: 7,
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'birthday',
      'credits',
      'email',
      'first_name',
      'partner_data',
      'postal_code',
    ]);
    expect((await post({ first_name: 'No email' })).body.errors).toEqual([
      { type: 'missing_field', resource: 'user', field: 'email', message: 'is required' },
    ]);
    // A domain with an empty label: `dot@example.com.` is the mailbox of `dot@example.com`, not another address.
    for (const email of ['dot@example.com.', 'dot@example..com', 'dot@.example.com']) {
      expect([email, (await post({ email })).body.errors?.[0]?.field]).toEqual([email, 'email']);
    }
  });

  it('updates profile fields and answers the user', async () => {
    const { body } = await post({ email: 'carl@example.com', first_name: 'Carl' });
    const reply = await put(body.user_id, { first_name: 'Carlos', last_name: 'Diaz', email: 'carlos@example.com' });
    expect(reply.body).toEqual({
      status: 'success',
      user: expect.objectContaining({ id: body.user_id, firstname: 'Carlos', lastname: 'Diaz' }),
    });
    // The old address is free again; the new one is taken.
    expect((await post({ email: 'carl@example.com' })).status).toBe(200);
    expect((await post({ email: 'carlos@example.com' })).status).toBe(422);
  });

  it('takes the password under both names (pass, password), checking each the same way', async () => {
    const { body } = await post({ email: 'names@example.com' });
    const short = await put(body.user_id, { password: 'abc', password_confirmation: 'zzz' });
    expect([short.status, short.body.errors.map((e: { message: string }) => e.message).length > 0]).toEqual([422, true]);
    expect((await put(body.user_id, { password: 'secret1', password_confirmation: 'secret1' })).status).toBe(200);
    // Errors name the fields as sent.
    expect((await put(body.user_id, { password: 'abcd', password_confirmation: 'abcd' })).body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'password', message: 'must be at least 5 characters' },
    ]);
    expect((await put(body.user_id, { password: 'abcde' })).body.errors).toEqual([
      { type: 'missing_field', resource: 'user', field: 'password_confirmation', message: 'is required with password' },
    ]);
    expect((await put(body.user_id, { password: 'abcde', password_confirmation: 'abcdf' })).body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'password_confirmation', message: 'does not match password' },
    ]);
  });

  it("counts a password's characters as written, not UTF-16 units", async () => {
    const { body } = await post({ email: 'emoji-pass@example.com' });
    const four = '🔑🔑🔑🔑'; // 8 UTF-16 units
    expect((await put(body.user_id, { pass: four, pass_confirmation: four })).body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'pass', message: 'must be at least 5 characters' },
    ]);
    expect((await put(body.user_id, { pass: `${four}🔑`, pass_confirmation: `${four}🔑` })).status).toBe(200);
    // Joined emoji and accents count as one character each, as a reader sees them.
    const family = '👩‍👩‍👧'; // 5 code points, one character
    expect((await put(body.user_id, { pass: family.repeat(4), pass_confirmation: family.repeat(4) })).body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'pass', message: 'must be at least 5 characters' },
    ]);
    const accented = 'e\u0301'.repeat(4); // é written as two code points, four times
    expect((await put(body.user_id, { pass: accented, pass_confirmation: accented })).body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'pass', message: 'must be at least 5 characters' },
    ]);
  });

  it('refuses both names of the password with different values, naming the conflict', async () => {
    const { body } = await post({ email: 'two-names@example.com' });
    expect(
      (await put(body.user_id, { pass: 'secret1', pass_confirmation: 'secret1', password: 'other22', password_confirmation: 'other22' }))
        .body.errors,
    ).toEqual([
      { type: 'invalid', resource: 'user', field: 'password', message: 'differs from pass: give one of the two' },
      { type: 'invalid', resource: 'user', field: 'password_confirmation', message: 'differs from pass_confirmation: give one of the two' },
    ]);
    // The same value under both names is one password.
    expect((await put(body.user_id, { pass: 'secret1', password: 'secret1', pass_confirmation: 'secret1' })).status).toBe(200);
  });

  it('sets a password of at least five characters, confirmed', async () => {
    const { body } = await post({ email: 'dana@example.com' });
    expect((await put(body.user_id, { pass: 'abcd', pass_confirmation: 'abcd' })).body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'pass', message: 'must be at least 5 characters' },
    ]);
    expect((await put(body.user_id, { pass: 'abcde' })).body.errors).toEqual([
      { type: 'missing_field', resource: 'user', field: 'pass_confirmation', message: 'is required with pass' },
    ]);
    expect((await put(body.user_id, { pass: 'abcde', pass_confirmation: 'abcdf' })).body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'pass_confirmation', message: 'does not match pass' },
    ]);
    expect((await put(body.user_id, { pass: 'abcde', pass_confirmation: 'abcde' })).status).toBe(200);
  });

  it('soft-deletes: a deleted user is not found and cannot be updated, except to undelete', async () => {
    const { body } = await post({ email: 'erin@example.com' });
    expect((await put(body.user_id, { is_deleted: true })).status).toBe(200);
    expect((await get(body.user_id)).status).toBe(404);
    const refused = await put(body.user_id, { first_name: 'Erin' });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'is_deleted', message: 'the user is deleted: only is_deleted=false restores it' },
    ]);
    expect((await put(body.user_id, { is_deleted: false, first_name: 'Erin' })).body.user).toMatchObject({ firstname: 'Erin' });
    expect((await get(body.user_id)).status).toBe(200);
  });

  it('answers 404 find_failed for an unknown user', async () => {
    expect((await get('nobody')).body).toEqual({ status: 'error', error_type: 'find_failed', error_msg: 'user not found' });
    expect((await put('nobody', { first_name: 'x' })).status).toBe(404);
  });

  describe('update_by_email, its token rules', () => {
    it('takes no password, and changes nothing when one is sent', async () => {
      await post({ email: 'nopass@example.com', first_name: 'Kept' });
      const reply = await byEmail('nopass@example.com', { first_name: 'Changed', pass: 'secret99', pass_confirmation: 'secret99' });
      expect([reply.status, reply.body.errors?.map((e: { field: string }) => e.field)]).toEqual([422, ['pass', 'pass_confirmation']]);
      expect((await byEmail('nopass@example.com', {})).body.user.firstname).toBe('Kept');
    });
    it('1. token sent and unchanged: updates the rest', async () => {
      await post({ email: 'rule1@example.com', token: 't-1' });
      const reply = await byEmail('rule1@example.com', { token: 't-1', first_name: 'One' });
      expect(reply.body.user).toMatchObject({ token: 't-1', firstname: 'One' });
    });
    it('2. token sent, none stored before: stored, no error', async () => {
      await post({ email: 'rule2@example.com' });
      expect((await byEmail('rule2@example.com', { token: 't-2' })).body.user).toMatchObject({ token: 't-2' });
    });
    it('3. token sent and different: 422 update_failed unless overwrite_token=true', async () => {
      await post({ email: 'rule3@example.com', token: 't-3' });
      const refused = await byEmail('rule3@example.com', { token: 'other', first_name: 'Three' });
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({
        status: 'error',
        error_type: 'update_failed',
        error_msg: 'the user has a different token; add overwrite_token=true to replace it',
      });
      const replaced = await byEmail('rule3@example.com', { token: 'other', first_name: 'Three' }, true);
      expect(replaced.body.user).toMatchObject({ token: 'other', firstname: 'Three' });
    });
    it('3. a token sent as null, or another one, is a change of token too; the same token with spaces is not', async () => {
      await post({ email: 'rule3b@example.com', token: 'tok1' });
      const cleared = await byEmail('rule3b@example.com', { token: null });
      expect([cleared.status, cleared.body.error_type]).toEqual([422, 'update_failed']);
      expect((await byEmail('rule3b@example.com', { token: ' tok1 ', first_name: 'Same' })).body.user).toMatchObject({
        token: 'tok1',
        firstname: 'Same',
      });
      expect((await byEmail('rule3b@example.com', { token: 'tok2' })).status).toBe(422);
      // A token that is not text is a bad field, whatever the token stored.
      for (const token of [5, { t: 1 }, ['tok1']]) {
        const bad = await byEmail('rule3b@example.com', { token });
        expect([bad.status, bad.body.error_type, bad.body.errors]).toEqual([
          422,
          'validation_failed',
          [{ type: 'invalid', resource: 'user', field: 'token', message: 'must be text' }],
        ]);
      }
    });
    it('4. unknown email: creates the user', async () => {
      const created = await byEmail('Rule4@Example.com', { first_name: 'Four', token: 't-4' });
      expect(created.status).toBe(200);
      expect(created.body.user).toMatchObject({ firstname: 'Four', token: 't-4' });
      expect((await post({ email: 'rule4@example.com' })).status).toBe(422);
    });
    it('4. unknown email sent with is_deleted: true: creates the user deleted, and is_deleted: false restores it', async () => {
      const created = await byEmail('rule4-deleted@example.com', { first_name: 'Gone', is_deleted: true });
      expect(created.status).toBe(200);
      expect(created.body.user).toMatchObject({ firstname: 'Gone' });
      expect((await get(created.body.user.id)).status).toBe(404);
      const restored = await byEmail('rule4-deleted@example.com', { is_deleted: false });
      expect([restored.status, restored.body.user.id]).toEqual([200, created.body.user.id]);
      expect((await get(created.body.user.id)).status).toBe(200);
    });
  });
});
