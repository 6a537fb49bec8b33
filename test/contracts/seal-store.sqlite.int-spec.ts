import { SqliteSealStore } from '@deals/adapters/seal-store/sqlite-seal-store.adapter';
import { sealStoreContract } from '@deals/testing/contracts/seal-store.contract';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

sealStoreContract('sqlite file', async () => {
  const dir = tempDir('seals');
  const file = join(dir.path, 'seals.sqlite');
  const store = new SqliteSealStore(file);
  return {
    store,
    openAnother: async () => new SqliteSealStore(file),
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});
