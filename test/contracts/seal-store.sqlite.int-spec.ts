import { SqliteSealStore } from '@deals/adapters/seal-store/sqlite-seal-store.adapter';
import { sealStoreContract } from '@deals/testing/contracts/seal-store.contract';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
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

describe('SqliteSealStore: the sealer named in sealer.pid', () => {
  it('is not running once its process is gone (a kill -9 leaves the file), and is not taken from a live one', async () => {
    const dir = tempDir('seals-pid');
    const store = new SqliteSealStore(join(dir.path, 'seals.sqlite'));
    try {
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
      writeFileSync(join(dir.path, 'sealer.pid'), `${gone}\n`);
      expect(await store.sealerRunning()).toBe(false);
      // A process that declares itself takes a dead one's place, and leaves a live one's be.
      await store.declareSealer();
      expect(readFileSync(join(dir.path, 'sealer.pid'), 'utf8')).toBe(`${process.pid}\n`);
      await store.close();
      writeFileSync(join(dir.path, 'sealer.pid'), `${process.ppid}\n`);
      await store.declareSealer();
      await store.close();
      expect(readFileSync(join(dir.path, 'sealer.pid'), 'utf8')).toBe(`${process.ppid}\n`);
      expect(await store.sealerRunning()).toBe(true);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
