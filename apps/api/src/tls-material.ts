import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { ServiceConfig } from '@deals/runtime';

export interface TlsMaterial {
  key: string;
  cert: string;
}

/**
 * The certificate the service serves: from TLS_CERT_FILE/TLS_KEY_FILE when given, otherwise a
 * self-signed one made on the first start and kept in `<DATA_DIR>/tls/`.
 */
export async function tlsMaterial(config: ServiceConfig): Promise<TlsMaterial> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    return { cert: readFileSync(config.tlsCertFile, 'utf8'), key: readFileSync(config.tlsKeyFile, 'utf8') };
  }
  const dir = join(config.dataDir, 'tls');
  const certFile = join(dir, 'self-signed.crt');
  const keyFile = join(dir, 'self-signed.key');
  if (existsSync(certFile) && existsSync(keyFile)) return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const made = await generate([{ name: 'commonName', value: 'localhost' }], {
    algorithm: 'sha256',
    keySize: 2048,
    notAfterDate: new Date(Date.now() + 825 * 24 * 3600 * 1000),
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
  writeFileSync(keyFile, made.private, { mode: 0o600 });
  writeFileSync(certFile, made.cert);
  return { key: made.private, cert: made.cert };
}
