import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { raceMakers } from '../../../test/support/race-makers';
import { installationSecret } from './installation-secret';

describe('installationSecret', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'secret-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('makes 32 random bytes on first use, readable by the owner only, and returns them ever after', () => {
    const first = installationSecret(dataDir, 'card-fingerprint');
    const file = join(dataDir, 'secrets', 'card-fingerprint.key');
    expect(first).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'secrets')).mode & 0o777).toBe(0o700);
    expect(installationSecret(dataDir, 'card-fingerprint').equals(first)).toBe(true);
    expect(readdirSync(join(dataDir, 'secrets'))).toEqual(['card-fingerprint.key']);
  });

  it('keeps one secret per name', () => {
    expect(installationSecret(dataDir, 'a').equals(installationSecret(dataDir, 'b'))).toBe(false);
  });

  it('uses a secret the operator put in place, and refuses one too short to be a secret', () => {
    mkdirSync(join(dataDir, 'secrets'));
    writeFileSync(join(dataDir, 'secrets', 'own.key'), Buffer.alloc(24, 7));
    expect(installationSecret(dataDir, 'own')).toEqual(Buffer.alloc(24, 7));
    writeFileSync(join(dataDir, 'secrets', 'short.key'), 'abc');
    expect(() => installationSecret(dataDir, 'short')).toThrow(/at least 16/);
  });

  it('gives 4 processes making it together on one empty folder the one secret the folder keeps', async () => {
    const made = await raceMakers(4, { make: 'secret', dataDir, name: 'raced' });
    const kept = readFileSync(join(dataDir, 'secrets', 'raced.key')).toString('hex');
    expect(made).toEqual([kept, kept, kept, kept]);
    expect(readdirSync(join(dataDir, 'secrets'))).toEqual(['raced.key']);
  }, 60_000);

  it.each(['../escape', 'a/b', '', '.hidden'])('refuses the name %j', (name) => {
    expect(() => installationSecret(dataDir, name)).toThrow(/invalid secret name/);
  });
});
