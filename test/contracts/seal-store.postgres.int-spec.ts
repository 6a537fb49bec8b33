import { PostgresSealStore } from '@deals/adapters/seal-store/postgres-seal-store.adapter';
import { sealStoreContract } from '@deals/testing/contracts/seal-store.contract';
import { Client } from 'pg';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`SealStore contract: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => (database = await createTestDatabase('seals')));
  afterAll(async () => database?.drop());

  sealStoreContract('postgresql', async () => {
    const store = new PostgresSealStore(database.url);
    return {
      store,
      openAnother: async () => new PostgresSealStore(database.url),
      cleanup: async () => {
        await store.close();
        const admin = new Client({ connectionString: database.url });
        await admin.connect();
        await admin.query('DROP TABLE IF EXISTS event_seals, audit_checkpoints, audit_checkpoint_seals, audit_stream_seals');
        await admin.end();
      },
    };
  });

  describe('PostgresSealStore: seals written one row an event, before they were packed', () => {
    it('keeps its tables and reads them beside the packed ones: by checkpoint, by stream and revision, and as a stream’s newest link', async () => {
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      const store = new PostgresSealStore(database.url);
      try {
        // A database of before: the checkpoints and one row a seal, as they were made then.
        await admin.query(`
          CREATE TABLE audit_checkpoints (number bigint PRIMARY KEY, previous text, from_position text NOT NULL, to_position text NOT NULL,
            count bigint NOT NULL, root text NOT NULL, sealed_at text NOT NULL, signature text NOT NULL);
          CREATE TABLE event_seals (position text PRIMARY KEY, stream_id text NOT NULL, revision bigint NOT NULL, hash text NOT NULL,
            link text NOT NULL, checkpoint bigint NOT NULL, idx bigint NOT NULL, UNIQUE (stream_id, revision));`);
        const legacy = (position: string, streamId: string, revision: number, idx: number) => ({
          position,
          streamId,
          revision,
          hash: `hash-${position}`,
          link: `link-${position}`,
          checkpoint: 1,
          index: idx,
        });
        const first = [legacy('001', 'a', 0, 0), legacy('002', 'b', 0, 1)];
        await admin.query(
          `INSERT INTO audit_checkpoints (number, previous, from_position, to_position, count, root, sealed_at, signature)
           VALUES (1, NULL, '001', '002', 2, 'root-1', '2026-06-15T12:00:00.000Z', 'signature-1')`,
        );
        for (const seal of first)
          await admin.query(
            'INSERT INTO event_seals (position, stream_id, revision, hash, link, checkpoint, idx) VALUES ($1, $2, $3, $4, $5, 1, $6)',
            [seal.position, seal.streamId, seal.revision, seal.hash, seal.link, seal.index],
          );
        const second = { ...legacy('003', 'a', 1, 0), checkpoint: 2 };
        await store.write(
          {
            number: 2,
            previous: 'hash-of-1',
            fromPosition: '003',
            toPosition: '003',
            count: 1,
            root: 'root-2',
            sealedAt: '2026-06-15T12:00:01.000Z',
            signature: 'signature-2',
          },
          [second],
        );
        expect(await store.sealsOf(1)).toEqual(first);
        expect(await store.sealsOf(2)).toEqual([second]);
        expect(await store.sealsOfStream('a')).toEqual([first[0], second]);
        expect(await store.sealOf('a', 0)).toEqual(first[0]);
        expect(await store.sealOf('a', 1)).toEqual(second);
        expect(await store.streamLinks(['a', 'b'])).toEqual(
          new Map([
            ['a', { revision: 1, link: 'link-003' }],
            ['b', { revision: 0, link: 'link-002' }],
          ]),
        );
      } finally {
        await store.close();
        await admin.query('DROP TABLE IF EXISTS event_seals, audit_checkpoints, audit_checkpoint_seals, audit_stream_seals');
        await admin.end();
      }
    });
  });
}
