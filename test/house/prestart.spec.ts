import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

const PRESTART = join(__dirname, '..', '..', 'scripts', 'prestart.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { apiServing } = require(PRESTART) as { apiServing(dataDir: string): number | null };

describe("npm start's build step (scripts/prestart.js)", () => {
  const dir = tempDir('prestart');
  afterAll(() => dir.remove());

  it('refuses to rebuild dist/ while an API it would start beside serves the data folder', () => {
    // A process whose command line names the API's entry, as a running API's does.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 60_000)', 'dist/apps/api/src/main.js'], { stdio: 'ignore' });
    try {
      const data = join(dir.path, 'data');
      mkdirSync(data, { recursive: true });
      writeFileSync(join(data, 'api.pid'), `${holder.pid}\n`);
      const ran = spawnSync(process.execPath, [PRESTART], { env: { ...process.env, DATA_DIR: data }, encoding: 'utf8' });
      expect(ran.status).toBe(1);
      expect(ran.stderr).toContain(`another API process (pid ${holder.pid}) serves ${data}: stop it first`);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('takes a pid in api.pid that is a live process of something else (reused after a reboot) for no API', () => {
    const data = join(dir.path, 'other');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'api.pid'), `${process.pid === 1 ? 2 : 1}\n`);
    expect(apiServing(data)).toBeNull();
  });
});
