import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = { min: 24, max: 64 };
/** What a fresh secret holds: 256 bits, the HMAC-SHA256 key size. */
const NEW_SECRET_BYTES = 32;

/** The `user-agent` of every delivery, so a receiver can tell our calls in its logs. */
export const WEBHOOK_USER_AGENT = 'deals-service-webhooks/1';

/** The headers of one signed delivery (Standard Webhooks), lower-case as HTTP/2 and Node spell them. */
export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
  'user-agent': string;
};

/** A webhook secret that is not `whsec_` followed by the base64 of 24 to 64 bytes. Its message never repeats the secret. */
export class InvalidWebhookSecret extends Error {
  override readonly name = 'InvalidWebhookSecret';
}

/**
 * A new endpoint secret in the Standard Webhooks form, `whsec_<base64 of the key>`: of `bytes`
 * when given (24 to 64 of them), of 32 random bytes otherwise.
 */
export function newWebhookSecret(bytes: Buffer = randomBytes(NEW_SECRET_BYTES)): string {
  if (bytes.length < SECRET_BYTES.min || bytes.length > SECRET_BYTES.max) {
    throw new InvalidWebhookSecret(`a webhook secret holds ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes, not ${bytes.length}`);
  }
  return SECRET_PREFIX + bytes.toString('base64');
}

/**
 * The `webhook-signature` header value for one delivery: `v1,<base64 HMAC-SHA256>` over
 * `${messageId}.${timestampSeconds}.${body}` per secret, space-separated. An endpoint whose
 * secret is being rotated is given both, and a receiver holding either one accepts the call.
 */
export function signWebhook(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): string {
  if (secrets.length === 0) throw new InvalidWebhookSecret('a webhook is signed with at least one secret');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError(`a webhook timestamp is whole seconds since the epoch, not ${timestampSeconds}`);
  }
  const signed = `${messageId}.${timestampSeconds}.`;
  return secrets.map((secret) => 'v1,' + createHmac('sha256', keyOf(secret)).update(signed).update(body).digest('base64')).join(' ');
}

/** Every header of one signed delivery of `body`, a JSON document. */
export function webhookHeaders(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): WebhookHeaders {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signWebhook(secrets, messageId, timestampSeconds, body),
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
  };
}

/** The HMAC key of a secret: the bytes its base64 part decodes to, once the form is checked. */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new InvalidWebhookSecret(`a webhook secret starts with "${SECRET_PREFIX}"`);
  const encoded = secret.slice(SECRET_PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  // Node's decoder skips what is not base64; encoding back tells a clean value from one it repaired.
  if (key.length === 0 || key.toString('base64') !== encoded) {
    throw new InvalidWebhookSecret(`a webhook secret is "${SECRET_PREFIX}" followed by standard, padded base64`);
  }
  if (key.length < SECRET_BYTES.min || key.length > SECRET_BYTES.max) {
    throw new InvalidWebhookSecret(`a webhook secret holds ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes, not ${key.length}`);
  }
  return key;
}
