import { MingoViewStore } from '../../libs/adapters/src/view-store/mingo/mingo-view-store.adapter';
import { viewStoreContract } from '../../libs/testing/src/contracts/view-store.contract';
import { tempDir } from '../support/temp-dir';

viewStoreContract('embedded (mingo)', async () => {
  const dir = tempDir('views');
  const views = new MingoViewStore(dir.path);
  return {
    views,
    openAgain: async () => new MingoViewStore(dir.path),
    cleanup: async () => {
      await views.close();
      dir.remove();
    },
  };
});
