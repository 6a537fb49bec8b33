import { join } from 'node:path';
import { SqliteEventStore } from '../../libs/adapters/src/event-store/sqlite/sqlite-event-store.adapter';
import { eventStoreContract } from '../../libs/testing/src/contracts/event-store.contract';
import { tempDir } from '../support/temp-dir';

eventStoreContract('sqlite', async () => {
  const dir = tempDir('events');
  const file = join(dir.path, 'events.sqlite');
  const store = new SqliteEventStore(file);
  return {
    store,
    connectAgain: async () => new SqliteEventStore(file),
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});
