import type { LookupAddress } from 'node:dns';
import { ResolveHost } from './address-guard';
import { checkWebhookUrl } from './webhook-url';

/** A resolver that knows a few names, as DNS would answer them. */
const dns: ResolveHost = async (hostname) => {
  const known: Record<string, LookupAddress[]> = {
    'partner.example': [{ address: '93.184.215.14', family: 4 }],
    'split.example': [
      { address: '10.0.0.7', family: 4 },
      { address: '2606:4700::6810:84e5', family: 6 },
    ],
    'internal.example': [
      { address: '10.0.0.7', family: 4 },
      { address: 'fd00::7', family: 6 },
    ],
  };
  if (known[hostname]) return known[hostname];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
const check = (url: string, allowPrivateAddresses = false) => checkWebhookUrl(url, allowPrivateAddresses, dns);

describe('checkWebhookUrl', () => {
  it('accepts an https URL whose host resolves to a public address', async () => {
    expect(await check('https://partner.example/hooks?tenant=1')).toBeNull();
    expect(await check('https://partner.example:8443/hooks')).toBeNull();
    expect(await check('https://split.example/hooks')).toBeNull(); // deliveries go to its public address only
    expect(await check('https://93.184.215.14/hooks')).toBeNull();
  });

  it('refuses what is not https', async () => {
    expect(await check('http://partner.example/hooks')).toBe('the URL must use https');
    expect(await check('partner.example/hooks')).toBe('not a valid URL');
  });

  it('refuses credentials in the URL', async () => {
    expect(await check('https://user:pass@partner.example/hooks')).toBe('the URL must not carry credentials (user:password@)');
    expect(await check('https://user@partner.example/hooks')).toBe('the URL must not carry credentials (user:password@)');
  });

  it('refuses a URL longer than 2,048 characters', async () => {
    const url = 'https://partner.example/' + 'a'.repeat(2048 - 24);
    expect(await check(url)).toBeNull();
    expect(await check(url + 'a')).toBe('the URL is longer than 2048 characters');
  });

  it('refuses a host that does not resolve', async () => {
    expect(await check('https://nowhere.example/hooks')).toBe('the host does not resolve (ENOTFOUND)');
  });

  it('refuses private addresses, written out or resolved, unless allowed', async () => {
    expect(await check('https://internal.example/hooks')).toBe(
      'refused: the host resolves only to refused addresses (private, unique-local)',
    );
    expect(await check('https://127.0.0.1:8443/hooks')).toBe('refused: the host is a loopback address');
    expect(await check('https://[::ffff:169.254.169.254]/latest')).toBe('refused: the host is a link-local address');
    // The URL parser reads every IPv4 spelling as the address it is.
    expect(await check('https://0x7f.1/hooks')).toBe('refused: the host is a loopback address');
    expect(await check('https://internal.example/hooks', true)).toBeNull();
    expect(await check('https://127.0.0.1:8443/hooks', true)).toBeNull();
  });

  it('resolves with the system resolver when given none', async () => {
    expect(await checkWebhookUrl('https://localhost/hooks', false)).toMatch(
      /^refused: the host resolves only to refused addresses \(.*loopback/,
    );
    expect(await checkWebhookUrl('https://localhost/hooks', true)).toBeNull();
  });
});
