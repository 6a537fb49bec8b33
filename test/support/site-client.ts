import { generate } from 'otplib';
import { request } from 'undici';
import { InsecureHttps } from './insecure-https';

let clients = 0;

/**
 * A loopback address of its own for each client (127.0.0.2, 127.0.0.3 ...: Linux answers the whole
 * of 127/8 on loopback), as browsers on different machines: one test's wrong attempts never make
 * another test's client wait for its address.
 */
function nextLoopbackAddress(): string {
  const n = clients++;
  return `127.0.${Math.floor(n / 250)}.${(n % 250) + 2}`;
}

export interface Page {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** `Set-Cookie` lines of the answer. */
  cookies: string[];
  location?: string;
}

/** The value of a hidden or text input of a page's form. */
export function inputValue(html: string, name: string): string | undefined {
  const tag = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0];
  const value = tag && /value="([^"]*)"/.exec(tag)?.[1];
  return value?.replace(/&#x3D;/g, '=').replace(/&amp;/g, '&');
}

/** Where a form says it was posted from: its `Origin` (null: none) and `Referer` headers. */
export interface PostedFrom {
  origin?: string | null;
  referer?: string;
}

export interface SiteClientOptions {
  /** The site's origin as the browser sees it (default: the base URL's). */
  origin?: string;
  /** Headers sent with every request (a TLS proxy's `X-Forwarded-*`). */
  headers?: Record<string, string>;
  /** The address it connects from (the next unused loopback address unless given). */
  address?: string;
}

/**
 * A browser in miniature for the partner site: a cookie jar, forms posted with the page's CSRF
 * token and, as a browser posts a form, with the site's `Origin`.
 */
export class SiteClient {
  readonly jar = new Map<string, string>();
  private readonly agent: InsecureHttps;

  /** The client's own address, which the site's throttle counts by. */
  readonly address: string;

  constructor(
    readonly baseUrl: string,
    private readonly options: SiteClientOptions = {},
  ) {
    this.address = options.address ?? nextLoopbackAddress();
    this.agent = new InsecureHttps({ localAddress: this.address });
  }

  get origin(): string {
    return this.options.origin ?? new URL(this.baseUrl).origin;
  }

  async get(path: string): Promise<Page> {
    return this.send('GET', path);
  }

  /**
   * Posts a form as a browser does: urlencoded, with the given fields (give `_csrf` to post a token),
   * from the site's origin unless `from` says otherwise.
   */
  async post(path: string, fields: Record<string, string>, from: PostedFrom = {}): Promise<Page> {
    const origin = from.origin === undefined ? this.origin : from.origin;
    const headers: Record<string, string> = {};
    if (origin !== null) headers.origin = origin;
    if (from.referer !== undefined) headers.referer = from.referer;
    return this.send('POST', path, new URLSearchParams(fields).toString(), headers);
  }

  /** Opens `pagePath`, then posts `fields` to `action` with the CSRF token that page carried. */
  async submit(pagePath: string, action: string, fields: Record<string, string>): Promise<Page> {
    const page = await this.get(pagePath);
    const token = inputValue(page.text, '_csrf');
    if (!token) throw new Error(`no CSRF token on ${pagePath} (${page.status})`);
    return this.post(action, { ...fields, _csrf: token });
  }

  async signIn(email: string, password: string, code = ''): Promise<Page> {
    return this.submit('/partner/sign-in', '/partner/sign-in', { email, password, code });
  }

  private async send(method: 'GET' | 'POST', path: string, body?: string, extra: Record<string, string> = {}): Promise<Page> {
    const headers: Record<string, string> = { ...this.options.headers, ...extra };
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const reply = await request(new URL(path, this.baseUrl), { method, headers, body, dispatcher: this.agent });
    const text = await reply.body.text();
    const set = reply.headers['set-cookie'];
    const cookies = set === undefined ? [] : [set].flat();
    for (const line of cookies) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      const maxAge = attributes.find((a) => /max-age/i.test(a));
      if (value === '' || (maxAge && /=\s*0$/.test(maxAge))) this.jar.delete(name.trim());
      else this.jar.set(name.trim(), value);
    }
    const location = reply.headers.location;
    return {
      status: reply.statusCode,
      headers: reply.headers,
      text,
      cookies,
      location: typeof location === 'string' ? location : undefined,
    };
  }
}

/** The TOTP code of a secret at an instant (the service's clock in tests). */
export const totpAt = (secret: string, at: Date) => generate({ secret, epoch: Math.floor(at.getTime() / 1000) });
