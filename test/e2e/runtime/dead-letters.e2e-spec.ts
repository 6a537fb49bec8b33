import { userStream } from '@deals/accounts/domain/user/user.events';
import { appendToStream, DeadLetter, EventStore, listDeadLetters, ManualClock, ViewStore } from '@deals/kernel';
import { ServiceMetrics } from '@deals/runtime';
import { randomUUID } from 'node:crypto';
import { runCli, TestApi } from '../../support/api-harness';
import { eventually } from '../../support/eventually';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';
import { tempDir } from '../../support/temp-dir';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`dead letters on PostgreSQL — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('an event the users view cannot store, already in a PostgreSQL log', () => {
    let database: { url: string; drop: () => Promise<void> };
    const dir = tempDir('dead-letters');
    beforeAll(async () => (database = await createTestDatabase('dead_letters_e2e')));
    afterAll(async () => {
      await database?.drop();
      dir.remove();
    });

    it('is set aside: the views go on, answers and readiness come back, the metric and the CLI tell of it', async () => {
      const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
      const env = { DATABASE_URL: database.url, RUN_PROJECTIONS: 'on' };
      const api = await TestApi.start({ clock, dataDir: dir.path, env });
      try {
        const { apiKey } = await api.createPartner();
        const user = (await api.call('POST', '/users', { apiKey, body: { email: 'before@example.com' } })).body.user_id;
        // Written before the edge refused such names (or by a defect): JSONB refuses the NUL character.
        const poisoned = await appendToStream(
          api.get(EventStore),
          userStream(user),
          [
            {
              id: randomUUID(),
              type: 'UserProfileChanged',
              data: { userId: user, changes: { firstName: 'bad \u0000 name' } },
              metadata: { occurredAt: clock.now().toISOString() },
            },
          ],
          'any',
        );
        // Every later event is applied: a user made after it reads back at once (its answer waited for its view).
        const after = await api.call('POST', '/users', { apiKey, body: { email: 'after@example.com', first_name: 'Ada' } });
        expect(after.status).toBe(200);
        expect((await api.call('GET', `/users/${after.body.user_id}`, { apiKey })).status).toBe(200);
        // The same user's later change too.
        const renamed = await api.call('PUT', `/users/${user}`, { apiKey, body: { last_name: 'Lovelace' } });
        expect(renamed.status).toBe(200);
        expect((await api.call('GET', `/users/${user}`, { apiKey })).body.user.lastname).toBe('Lovelace');
        expect((await api.call('GET', '/health/ready')).status).toBe(200);

        const letters = await listDeadLetters(api.get(ViewStore), 'user_accounts');
        expect(letters).toEqual([
          expect.objectContaining({ position: poisoned.position, eventType: 'UserProfileChanged', streamId: userStream(user) }),
        ]);
        expect(JSON.stringify(letters)).not.toContain('bad');
        const metrics = (await api.get(ServiceMetrics).page()).text;
        expect(metrics).toContain('deals_projection_dead_letters_total{projection="user_accounts"} 1');
        expect(metrics).toContain('deals_projection_dead_letters{projection="user_accounts"} 1');

        const listed = await eventually(
          () => runCli(dir.path, ['projections:dead-letters', 'user_accounts', '--json'], env),
          (run) => run.code === 0,
        );
        expect(listed.stderr).toBe('');
        expect((JSON.parse(listed.stdout) as DeadLetter[]).map((l) => [l.projection, l.position])).toEqual([
          ['user_accounts', poisoned.position],
        ]);
      } finally {
        await api.stop();
      }
    });
  });
}
