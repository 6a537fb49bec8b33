import { existsSync, readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { ServiceConfig } from '@deals/runtime/service-config';
import { underFolderLock, writeWhole } from '@deals/runtime/shared-folder';

export interface TlsMaterial {
  key: string;
  cert: string;
}

/**
 * The certificate the service serves: from TLS_CERT_FILE/TLS_KEY_FILE when given, otherwise a
 * self-signed one made on the first start and kept in `<DATA_DIR>/tls/`. Processes started
 * together on one data folder make it once, under a lock, and all serve that one.
 */
export async function tlsMaterial(config: ServiceConfig): Promise<TlsMaterial> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    return { cert: readFileSync(config.tlsCertFile, 'utf8'), key: readFileSync(config.tlsKeyFile, 'utf8') };
  }
  const dir = join(config.dataDir, 'tls');
  const files = { cert: join(dir, 'self-signed.crt'), key: join(dir, 'self-signed.key') };
  const kept = readPair(files);
  if (kept) return kept;
  return underFolderLock(join(dir, '.self-signed.lock'), async () => {
    const made = readPair(files);
    if (made) return made; // by the process that held the lock before
    const pair = await selfSigned();
    // The key first: the certificate's arrival is what says the pair is complete.
    writeWhole(files.key, pair.key, 0o600);
    writeWhole(files.cert, pair.cert, 0o644);
    return pair;
  });
}

/** The kept pair, when both files are there and the key is the certificate's (otherwise it is made again). */
function readPair(files: { cert: string; key: string }): TlsMaterial | null {
  if (!existsSync(files.cert) || !existsSync(files.key)) return null;
  const pair = { cert: readFileSync(files.cert, 'utf8'), key: readFileSync(files.key, 'utf8') };
  try {
    return new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key)) ? pair : null;
  } catch {
    return null;
  }
}

async function selfSigned(): Promise<TlsMaterial> {
  const made = await generate([{ name: 'commonName', value: 'localhost' }], {
    algorithm: 'sha256',
    // ECDSA P-256: made in a millisecond (an RSA key took a fifth of a second of CPU at each first
    // start) and cheaper for both sides of every handshake.
    keyType: 'ec',
    curve: 'P-256',
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
  return { key: made.private, cert: made.cert };
}
