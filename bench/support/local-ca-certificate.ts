import { generate } from 'selfsigned';

export interface LocalCaCertificate {
  cert: string;
  key: string;
}

/**
 * A self-signed certificate (EC unless told) that is its own CA, for localhost, 127.0.0.1 and ::1: what a
 * webhook receiver on this machine serves, so that the sender can trust it through
 * `NODE_EXTRA_CA_CERTS`, as a deployment trusts a private CA. (The bench's sink and the tests'
 * receiver share it; the API's own certificate is made by `tls-material.ts`.) `keyType: 'rsa'`
 * makes an RSA 2048 key, the kind of the API's own certificate, for a server whose TLS should cost
 * what the API's does.
 */
export async function localCaCertificate(commonName: string, keyType: 'ec' | 'rsa' = 'ec'): Promise<LocalCaCertificate> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType,
    ...(keyType === 'rsa' ? { keySize: 2048 } : {}),
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  } as never);
  return { cert: pems.cert, key: pems.private };
}
