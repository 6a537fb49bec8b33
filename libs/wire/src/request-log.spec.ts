import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loggableError, loggableUrl, refusedUrl, serviceLogger } from './request-log';

describe('loggableUrl', () => {
  it('redacts the values of secret parameters, however their names are escaped', () => {
    expect(loggableUrl('/api/v1/regions?api_key=dk_secret&per_page=5')).toBe('/api/v1/regions?api_key=[redacted]&per_page=5');
    expect(loggableUrl('/coupons/P1-1/print?key=abcDEF_123-xyz')).toBe('/coupons/P1-1/print?key=[redacted]');
    expect(loggableUrl('/api/v1/regions/boston?%61pi_key=dk_secret')).toBe('/api/v1/regions/boston?%61pi_key=[redacted]');
    expect(loggableUrl('/users/u1?access%5Ftoken=tok&x=1')).toBe('/users/u1?access%5Ftoken=[redacted]&x=1');
    expect(loggableUrl('/users/u1?ACCESS_TOKEN=tok')).toBe('/users/u1?ACCESS_TOKEN=[redacted]');
  });
  it('redacts card numbers and security codes sent in the query, and anything shaped like a card number', () => {
    expect(loggableUrl('/credit_cards?api_key=k&number=4242424242424242&verification_value=321&zip_code=60601')).toBe(
      '/credit_cards?api_key=[redacted]&number=[redacted]&verification_value=[redacted]&zip_code=60601',
    );
    expect(loggableUrl('/x?note=4242-4242-4242-4242')).toBe('/x?note=[redacted]');
    expect(loggableUrl('/x?note=x4242424242424242&n=4242.4242.4242.4242&m=4242/4242/4242/4242')).toBe(
      '/x?note=[redacted]&n=[redacted]&m=[redacted]',
    );
    expect(loggableUrl('/x?cvc=123&cvv2=123&security_code=123')).toBe('/x?cvc=[redacted]&cvv2=[redacted]&security_code=[redacted]');
  });
  it('redacts bracketed and ;-separated forms of secret names', () => {
    expect(loggableUrl('/x?api_key[]=dk_1&api_key%5B%5D=dk_2&api_key[0]=dk_3')).toBe(
      '/x?api_key[]=[redacted]&api_key%5B%5D=[redacted]&api_key[0]=[redacted]',
    );
    expect(loggableUrl('/x?x=1;api_key=dk_1')).toBe('/x?x=1;api_key=[redacted]');
    expect(loggableUrl('/x?password[]=hunter22&credit_card[verification_value]=123&verification_value[]=321')).toBe(
      '/x?password[]=[redacted]&credit_card[verification_value]=[redacted]&verification_value[]=[redacted]',
    );
  });
  it('redacts secrets in malformed addresses: in the path, behind a second ?, under a padded name, or a key under any name', () => {
    const key = `dk_${'A1b2C3d4'.repeat(4)}`;
    expect(loggableUrl(`/deals/x;api_key=${key}`)).toBe('/deals/x;api_key=[redacted]');
    expect(loggableUrl(`/deals/x??api_key=${key}`)).toBe('/deals/x??api_key=[redacted]');
    expect(loggableUrl(`/deals/x?api_key%00=${key}`)).toBe('/deals/x?api_key%00=[redacted]');
    expect(loggableUrl(`/deals/x?+api_key=${key}`)).toBe('/deals/x?+api_key=[redacted]');
    expect(loggableUrl('/coupons/P1-1/qr.png;key=abcDEF_123-xyz')).toBe('/coupons/P1-1/qr.png;key=[redacted]');
    expect(loggableUrl(`/deals/x?apikey=${key}`)).toBe('/deals/x?apikey=[redacted]');
    expect(loggableUrl(`/deals/${key}`)).toBe('/deals/[redacted]');
    expect(loggableUrl(`/deals/x?k=${key.replace('_', '%5F')}`)).toBe('/deals/x?k=[redacted]');
    expect(loggableUrl(`/deals/${key.replace('_', '%5f')}`)).toBe('/deals/[redacted]');
    expect(loggableUrl('/users/x&pass=hunter22')).toBe('/users/x&pass=[redacted]');
    expect(loggableUrl('/users/x?passwd=hunter22&token=t0k')).toBe('/users/x?passwd=[redacted]&token=[redacted]');
  });

  it('writes no email address, in the path or a parameter, its @ escaped or not', () => {
    expect(loggableUrl('/api/v1/users/Zoe.Q@example.com/update_by_email?overwrite_token=true')).toBe(
      '/api/v1/users/[email]/update_by_email?overwrite_token=true',
    );
    expect(loggableUrl('/users/zoe%40example.com/subscriptions')).toBe('/users/[email]/subscriptions');
    expect(loggableUrl('/partner/lookup?q=zoe%40example.com&x=1')).toBe('/partner/lookup?q=[email]&x=1');
  });

  it('reads a long part in one pass: a megabyte without an @ is kept, one with an @ at its end is an address', () => {
    // Tried again from each of its characters, a part this long would keep the CPU for hours.
    const long = 'a'.repeat(1_000_000);
    expect(loggableUrl(`/deals/${long}?q=${long}`)).toBe(`/deals/${long}?q=${long}`);
    expect(loggableUrl(`/users/${long}@example.com/x`)).toBe('/users/[email]/x');
  });

  it('leaves addresses without secrets as they are', () => {
    expect(loggableUrl('/deals/chicago-spa-day?page=2&per_page=10')).toBe('/deals/chicago-spa-day?page=2&per_page=10');
    expect(loggableUrl('/deals/chicago-spa-day')).toBe('/deals/chicago-spa-day');
    expect(loggableUrl(undefined)).toBe('');
  });
});

describe('refusedUrl', () => {
  it('names a refused request by its route and its parameters’ names, without a value', () => {
    const routed = { url: '/users/mrk4929123456781234x1/coupons?filter=mrk2&per_page=5', routeOptions: { url: '/users/:user_id/coupons' } };
    expect(refusedUrl(routed)).toBe('/users/:user_id/coupons?filter=…&per_page=…');
    expect(refusedUrl({ url: '/nowhere/ana.lee@example.com/x', routeOptions: {} })).toBe('/nowhere/…');
    expect(refusedUrl({ url: '/deals/%?api_key=dk_secret;4929123456781234=1' })).toBe('/deals/…?api_key=…&…=…');
  });
});

describe('loggableError', () => {
  it("keeps an error's name, message, code and stack, and none of the fields in which a database quotes data", () => {
    const error = Object.assign(new Error('unsupported Unicode escape sequence'), {
      code: '22P05',
      detail: '\\u0000 cannot be converted to text.',
      where: 'JSON data, line 1: {"username":"mrk-secret-name\\u0000...',
      hint: 'mrk-secret-hint',
    });
    const shown = loggableError(error) as Record<string, unknown>;
    expect(shown).toMatchObject({ type: 'Error', message: 'unsupported Unicode escape sequence', code: '22P05' });
    expect(shown.stack).toEqual(expect.any(String));
    expect(JSON.stringify(shown)).not.toMatch(/mrk-secret|cannot be converted/);
    // The service's logger writes errors so.
    const folder = mkdtempSync(join(tmpdir(), 'error-log-'));
    try {
      const file = join(folder, 'service.log');
      serviceLogger('info', file).error({ err: error, status: 500 }, 'the service failed to answer');
      const line = JSON.parse(readFileSync(file, 'utf8').trim());
      expect(line.err).toMatchObject({ message: 'unsupported Unicode escape sequence', code: '22P05' });
      expect(JSON.stringify(line)).not.toMatch(/mrk-secret|cannot be converted/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
