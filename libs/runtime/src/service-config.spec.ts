import { ConfigError, loadServiceConfig } from './service-config';

describe('loadServiceConfig', () => {
  it('takes the defaults, and decimal numbers as given', () => {
    const config = loadServiceConfig({ PORT: '8443', LOG_LEVEL: 'warn' });
    expect(config).toMatchObject({
      port: 8443,
      logLevel: 'warn',
      publicBaseUrl: 'https://localhost:8443',
      siteBaseUrl: 'https://deals.example.com',
      tlsCertFile: null,
      maxConnections: 10_000,
      handshakeTimeoutMs: 10_000,
      couponExpirySweepMs: 600_000,
      trustedProxyHops: 1,
    });
    expect(loadServiceConfig({ TRUSTED_PROXY_HOPS: '2' }).trustedProxyHops).toBe(2);
  });

  it('refuses, naming the variable, what it would otherwise take wrongly or find out too late', () => {
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: '0x10f0' }, /^PORT must be a whole number up to 65535/],
      [{ PORT: '99999' }, /^PORT must be a whole number up to 65535/],
      [{ PORT: '1e3' }, /^PORT/],
      [{ READ_YOUR_WRITES_TIMEOUT_MS: '-1' }, /^READ_YOUR_WRITES_TIMEOUT_MS/],
      [{ MAX_CONNECTIONS: '0' }, /^MAX_CONNECTIONS must be at least 1/],
      [{ COUPON_EXPIRY_SWEEP_MS: '0' }, /^COUPON_EXPIRY_SWEEP_MS must be at least 1/],
      [{ HANDSHAKE_TIMEOUT_MS: '10s' }, /^HANDSHAKE_TIMEOUT_MS must be a whole number/],
      [{ LOG_LEVEL: 'nonsense' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
      [{ TLS_CERT_FILE: '/etc/cert.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE go together/],
      [{ TLS_KEY_FILE: '/etc/key.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE go together/],
      [{ PUBLIC_BASE_URL: 'notaurl' }, /^PUBLIC_BASE_URL must start with https:\/\/ or http:\/\//],
      [{ SITE_BASE_URL: 'https://' }, /^SITE_BASE_URL must be a URL with a host/],
      [{ IDEMPOTENCY_KEY_HOURS: '23' }, /^IDEMPOTENCY_KEY_HOURS must be at least 24/],
      [{ TRUSTED_PROXY_HOPS: '0' }, /^TRUSTED_PROXY_HOPS must be at least 1/],
    ];
    for (const [env, message] of refusals) {
      expect(() => loadServiceConfig(env)).toThrow(ConfigError);
      expect(() => loadServiceConfig(env)).toThrow(message);
    }
  });
});
