import type { FastifyRequest } from 'fastify';
import { isIP } from 'node:net';

/**
 * Fastify's `trustProxy` for a service behind `hops` proxies of its own: the connecting peer and the
 * `hops - 1` entries it appended last to `X-Forwarded-For` are proxies; the entry before them is the
 * client. Entries further left were written by the client and are never taken. (Fastify takes a
 * plain number as trusting no hop at all, so the count is given as a function.)
 */
export function trustedProxyHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/**
 * The client address a request is counted and recorded by: `request.ip` when it is an IP address,
 * else the connecting peer's (a proxy that forwarded whatever a client wrote there).
 */
export function clientAddress(request: FastifyRequest): string {
  const ip = request.ip;
  if (typeof ip === 'string' && isIP(ip) !== 0) return ip;
  return request.socket?.remoteAddress ?? '';
}
