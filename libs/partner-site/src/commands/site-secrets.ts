import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * The partner site's keys, derived from one installation secret (`secrets/partner-site.key`):
 * one seals TOTP secrets before they go into an event, one makes the forms' CSRF tokens, one signs
 * the visitors' form cookies, one signs the device cookies of members' known devices.
 */
export class SiteSecrets {
  readonly sealingKey: Buffer;
  readonly csrfKey: Buffer;
  readonly formCookieKey: Buffer;
  readonly deviceCookieKey: Buffer;

  constructor(installationSecret: Buffer) {
    this.sealingKey = createHmac('sha256', installationSecret).update('partner-site:seal').digest();
    this.csrfKey = createHmac('sha256', installationSecret).update('partner-site:csrf').digest();
    this.formCookieKey = createHmac('sha256', installationSecret).update('partner-site:form-cookie').digest();
    this.deviceCookieKey = createHmac('sha256', installationSecret).update('partner-site:device-cookie').digest();
  }
}

/** 256 random bits as text: session ids, invitation tokens. */
export const newSecret = () => randomBytes(32).toString('base64url');

/** What the log and the views keep of a random secret: its SHA-256 (a slow hash buys nothing against 256 random bits). */
export const secretHash = (secret: string) => createHash('sha256').update(secret).digest('hex');

/**
 * `text` sealed with AES-256-GCM under `key`, bound to `context` (authenticated, not stored: the
 * same context must be given to open it): `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
export function seal(key: Buffer, text: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** The text {@link seal} sealed, or null when it was not sealed under this key and context, or was changed. */
export function unseal(key: Buffer, sealed: string, context: string): string | null {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) return null;
  try {
    // The whole 16-byte tag, never a shorter one Node would otherwise accept.
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
