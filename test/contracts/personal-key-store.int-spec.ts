import { PostgresPersonalKeyStore } from '@deals/adapters/personal-key-store/postgres-personal-key-store.adapter';
import { SqlitePersonalKeyStore } from '@deals/adapters/personal-key-store/sqlite-personal-key-store.adapter';
import { PersonalKeyStore } from '@deals/kernel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

/** What every personal-key store promises, keys asked one at a time or many at once alike. */
function personalKeyStoreContract(name: string, open: () => Promise<{ store: PersonalKeyStore; cleanup: () => Promise<void> }>) {
  describe(`personal-data keys: ${name}`, () => {
    let store: PersonalKeyStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => ({ store, cleanup } = await open()));
    afterEach(async () => {
      await store.close();
      await cleanup();
    });

    it('gives each user one key for good, and none once erased', async () => {
      const [a, b] = await Promise.all([store.keyFor('u1'), store.keyFor('u1')]);
      expect(a).toHaveLength(32);
      expect(b!.equals(a!)).toBe(true);
      expect((await store.keyOf('u1')).key!.equals(a!)).toBe(true);
      await store.erase('u1', new Date());
      expect(await store.keyOf('u1')).toEqual({ key: null, erased: true });
      expect(await store.keyFor('u1')).toBeNull();
    });

    it('answers many users asked at once each with their own key, erasure or nothing', async () => {
      const made = new Map<string, Buffer>();
      for (let n = 0; n < 40; n++) made.set(`user-${n}`, (await store.keyFor(`user-${n}`))!);
      await store.erase('user-7', new Date());
      await store.erase('never-keyed', new Date());
      const asked = [...made.keys(), 'never-keyed', 'unknown', 'user-3'];
      const answers = await Promise.all(asked.map((userId) => store.keyOf(userId)));
      answers.forEach((answer, i) => {
        const userId = asked[i];
        if (userId === 'user-7' || userId === 'never-keyed') expect(answer).toEqual({ key: null, erased: true });
        else if (userId === 'unknown') expect(answer).toEqual({ key: null, erased: false });
        else expect(answer.key!.equals(made.get(userId)!)).toBe(true);
      });
    });
  });
}

personalKeyStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'personal-keys-'));
  return {
    store: new SqlitePersonalKeyStore(join(dir, 'personal-keys.sqlite')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

const unavailable = postgresUnavailableSync();
if (unavailable) {
  describe.skip(`personal-data keys: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  personalKeyStoreContract('postgresql', async () => {
    const database = await createTestDatabase('personalkeys');
    return { store: new PostgresPersonalKeyStore(database.url), cleanup: () => database.drop() };
  });
}
