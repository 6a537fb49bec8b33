import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { tempDir } from './temp-dir';

let made: Promise<{ TLS_CERT_FILE: string; TLS_KEY_FILE: string }> | undefined;

/**
 * A certificate for localhost and 127.0.0.1, made once for this test process, as the environment
 * that has a service serve it (TLS_CERT_FILE, TLS_KEY_FILE): a service started on a fresh data
 * folder otherwise makes a self-signed certificate of its own, a 2048-bit key each time.
 */
export function testCertificate(): Promise<{ TLS_CERT_FILE: string; TLS_KEY_FILE: string }> {
  made ??= (async () => {
    const pair = await generate([{ name: 'commonName', value: 'localhost' }], {
      algorithm: 'sha256',
      keySize: 2048,
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    } as never);
    const dir = tempDir('test-certificate');
    process.once('exit', dir.remove);
    const files = { TLS_CERT_FILE: join(dir.path, 'test.crt'), TLS_KEY_FILE: join(dir.path, 'test.key') };
    writeFileSync(files.TLS_CERT_FILE, pair.cert);
    writeFileSync(files.TLS_KEY_FILE, pair.private, { mode: 0o600 });
    return files;
  })();
  return made;
}
