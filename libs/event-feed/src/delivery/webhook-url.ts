import { isIP } from 'node:net';
import { bareHost, permittedAddresses, RefusedAddress, refusedLiteral, ResolveHost, resolveWithSystem } from './address-guard';

/** The longest endpoint URL accepted: a longer one is a mistake or an attempt to store data in ours. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Whether `url` can be registered as a webhook endpoint: null when it can, otherwise why not
 * (not https, credentials in it, too long, a host that does not resolve or resolves only to
 * refused addresses). Passing here proves nothing at delivery time: the sender judges the
 * address it connects to again on every connection.
 */
export async function checkWebhookUrl(
  url: string,
  allowPrivateAddresses: boolean,
  resolve: ResolveHost = resolveWithSystem,
): Promise<string | null> {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `the URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`;
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed) return 'not a valid URL';
  if (parsed.protocol !== 'https:') return 'the URL must use https';
  if (parsed.username || parsed.password) return 'the URL must not carry credentials (user:password@)';
  const host = bareHost(parsed);
  if (isIP(host) !== 0) {
    const refused = allowPrivateAddresses ? null : refusedLiteral(host);
    return refused && `refused: ${refused}`;
  }
  try {
    await permittedAddresses(host, resolve, allowPrivateAddresses);
    return null;
  } catch (error) {
    if (error instanceof RefusedAddress) return `refused: ${error.message}`;
    return `the host does not resolve (${(error as NodeJS.ErrnoException).code ?? 'no answer'})`;
  }
}
