import { SqliteIdempotencyStore } from '@deals/adapters/idempotency-store/sqlite-idempotency-store.adapter';
import { idempotencyStoreContract } from '@deals/testing/contracts/idempotency-store.contract';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

// One process serves a data folder (its lock): "another process" here is the next one on the same
// file, after the first stopped or died.
idempotencyStoreContract('sqlite file', async () => {
  const dir = tempDir('idempotency');
  const file = join(dir.path, 'idempotency.sqlite');
  const store = new SqliteIdempotencyStore(file);
  return {
    store,
    openAnother: async () => new SqliteIdempotencyStore(file),
    crash: (dying) => dying.close(),
    concurrentProcesses: false,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});
