import { MingoViewStore } from '@deals/adapters/view-store/mingo/mingo-view-store.adapter';
import { deadLettersContract } from '@deals/testing/contracts/dead-letters.contract';
import { tempDir } from '../support/temp-dir';

// The embedded store takes any JSON document: its dead letters come from a fold that throws.
deadLettersContract('embedded (mingo)', async () => {
  const dir = tempDir('dead-letters');
  const views = new MingoViewStore(dir.path);
  return {
    views,
    cleanup: async () => {
      await views.close();
      dir.remove();
    },
  };
});
