import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, LookupFunction } from 'node:net';
import { refusedAddressReason } from './refused-addresses';

/** Every address a host name resolves to, as the operating system's resolver gives them. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export const resolveWithSystem: ResolveHost = (hostname) => lookup(hostname, { all: true });

/** A connection the address policy stopped before it was made. */
export class RefusedAddress extends Error {
  override readonly name = 'RefusedAddress';
  readonly code = 'ERR_REFUSED_ADDRESS';
}

/** A URL's host as a resolver and `net.connect` take it: an IPv6 literal without its brackets. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Why the IP literal `host` is refused, or null (a host name, or an acceptable address). */
export function refusedLiteral(host: string): string | null {
  if (isIP(host) === 0) return null;
  const reason = refusedAddressReason(host);
  return reason && `the host is a ${reason} address`;
}

/**
 * The addresses of `hostname` that may be connected to: all of them when `allowPrivateAddresses`,
 * otherwise the public ones, and a RefusedAddress when none is left.
 */
export async function permittedAddresses(hostname: string, resolve: ResolveHost, allowPrivateAddresses: boolean): Promise<LookupAddress[]> {
  const addresses = await resolve(hostname);
  if (allowPrivateAddresses) return addresses;
  const permitted = addresses.filter(({ address }) => refusedAddressReason(address) === null);
  if (permitted.length === 0) {
    const reasons = [...new Set(addresses.map(({ address }) => refusedAddressReason(address)))].join(', ');
    throw new RefusedAddress(`the host resolves only to refused addresses (${reasons})`);
  }
  return permitted;
}

/**
 * A `lookup` for `net.connect` that resolves through the address policy. Given to every
 * connection, it judges the very address connected to, so a name that resolved to a public
 * address when it was registered and to an internal one now (DNS rebinding) is still refused.
 */
export function guardedLookup(resolve: ResolveHost, allowPrivateAddresses: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    permittedAddresses(hostname, resolve, allowPrivateAddresses).then(
      (addresses) => {
        const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        if (usable.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '');
        } else if (options.all) {
          callback(null, usable);
        } else {
          callback(null, usable[0].address, usable[0].family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
