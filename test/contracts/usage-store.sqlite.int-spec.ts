import { SqliteUsageStore } from '@deals/adapters/usage-store/sqlite-usage-store.adapter';
import { usageStoreContract } from '@deals/testing/contracts/usage-store.contract';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

// One process serves a data folder (its lock): "another process" here is the next one on the same
// file, after the first stopped.
usageStoreContract('sqlite file', async () => {
  const dir = tempDir('usage');
  const file = join(dir.path, 'usage.sqlite');
  const store = new SqliteUsageStore(file);
  return {
    store,
    openAnother: async () => new SqliteUsageStore(file),
    concurrentProcesses: false,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});
