import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadServiceConfig } from '@deals/runtime';
import { raceMakers } from '../../../test/support/race-makers';
import { tempDir } from '../../../test/support/temp-dir';
import { tlsMaterial } from './tls-material';

const MAKERS = 4;

describe('tlsMaterial (the self-signed certificate kept in the data folder)', () => {
  let dir: { path: string; remove: () => void };
  beforeEach(() => (dir = tempDir('tls')));
  afterEach(() => dir.remove());

  const kept = () => ({
    cert: readFileSync(join(dir.path, 'tls', 'self-signed.crt'), 'utf8'),
    key: readFileSync(join(dir.path, 'tls', 'self-signed.key'), 'utf8'),
  });

  it('makes a certificate on first use, keeps its key private, and serves the same one ever after', async () => {
    const config = loadServiceConfig({ DATA_DIR: dir.path });
    const first = await tlsMaterial(config);
    expect(first).toEqual(kept());
    expect(new X509Certificate(first.cert).checkPrivateKey(createPrivateKey(first.key))).toBe(true);
    expect(statSync(join(dir.path, 'tls', 'self-signed.key')).mode & 0o777).toBe(0o600);
    expect(await tlsMaterial(config)).toEqual(first);
    expect(readdirSync(join(dir.path, 'tls')).sort()).toEqual(['self-signed.crt', 'self-signed.key']);
  });

  it(`gives ${MAKERS} processes starting together on one empty folder the one certificate the folder keeps`, async () => {
    const made = (await raceMakers(MAKERS, { make: 'tls', dataDir: dir.path })).map((m) => JSON.parse(m) as { cert: string; key: string });
    const folder = kept();
    for (const pair of made) expect(pair).toEqual(folder);
    expect(new X509Certificate(folder.cert).checkPrivateKey(createPrivateKey(folder.key))).toBe(true);
    // No lock or temporary file is left behind.
    expect(readdirSync(join(dir.path, 'tls')).sort()).toEqual(['self-signed.crt', 'self-signed.key']);
  }, 60_000);

  it('makes the pair again when the kept key is not the certificate’s (a start interrupted between the two files)', async () => {
    const config = loadServiceConfig({ DATA_DIR: dir.path });
    const first = await tlsMaterial(config);
    const other = await tlsMaterial(loadServiceConfig({ DATA_DIR: join(dir.path, 'other') }));
    writeFileSync(join(dir.path, 'tls', 'self-signed.key'), other.key);
    const again = await tlsMaterial(config);
    expect(again.cert).not.toEqual(first.cert);
    expect(again).toEqual(kept());
    expect(new X509Certificate(again.cert).checkPrivateKey(createPrivateKey(again.key))).toBe(true);
  });
});
