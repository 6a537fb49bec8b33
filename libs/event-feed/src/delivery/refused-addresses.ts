import { isIPv4, isIPv6 } from 'node:net';

interface Range {
  first: bigint;
  bits: number;
  size: number;
  what: string;
}

const v4 = (cidr: string, what: string): Range => {
  const [address, size] = cidr.split('/');
  return { first: ipv4Value(address), bits: 32, size: Number(size), what };
};
const v6 = (cidr: string, what: string): Range => {
  const [address, size] = cidr.split('/');
  return { first: ipv6Value(address), bits: 128, size: Number(size), what };
};

/** IANA's special-purpose IPv4 blocks that are not the public internet (RFC 6890 and after). */
const REFUSED_V4: Range[] = [
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier-grade NAT'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignments'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.88.99.0/24', 'reserved (6to4 relay)'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

/**
 * IPv6 outside global unicast (2000::/3) is refused whole: that covers unspecified, loopback,
 * unique-local, link-local, site-local, multicast and the rest. These are the exceptions on
 * either side of that line.
 */
const REFUSED_V6: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('fc00::/7', 'unique-local'),
  v6('fe80::/10', 'link-local'),
  v6('ff00::/8', 'multicast'),
  v6('2001::/23', 'IETF protocol assignments'),
  v6('2001:db8::/32', 'documentation'),
  v6('3fff::/20', 'documentation'),
];
const GLOBAL_UNICAST_V6 = v6('2000::/3', 'global unicast');
/** IPv6 forms that carry an IPv4 address: it is that address that is reached, so it is what is judged. */
const CARRYING_V4 = [
  { range: v6('::ffff:0:0/96', 'IPv4-mapped'), shift: 0n },
  { range: v6('64:ff9b::/96', 'NAT64'), shift: 0n },
  { range: v6('2002::/16', '6to4'), shift: 80n },
];

/**
 * Why a webhook must not be sent to `address` (an IPv4 or IPv6 literal, as a resolver gives it),
 * e.g. `loopback`; null when it is a public address. What is not an IP address is refused too.
 */
export function refusedAddressReason(address: string): string | null {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(literal)) return reasonV4(ipv4Value(literal));
  if (!isIPv6(literal)) return 'not an IP address';
  // A zone (fe80::1%eth0) only ever follows a link-local address.
  if (literal.includes('%')) return 'link-local';
  const value = ipv6Value(literal);
  for (const { range, shift } of CARRYING_V4) {
    if (within(value, range)) return reasonV4((value >> shift) & 0xffffffffn);
  }
  const refused = REFUSED_V6.find((range) => within(value, range));
  if (refused) return refused.what;
  return within(value, GLOBAL_UNICAST_V6) ? null : 'reserved';
}

function reasonV4(value: bigint): string | null {
  return REFUSED_V4.find((range) => within(value, range))?.what ?? null;
}

function within(value: bigint, range: Range): boolean {
  const hostBits = BigInt(range.bits - range.size);
  return value >> hostBits === range.first >> hostBits;
}

function ipv4Value(address: string): bigint {
  return address.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

/** The 128-bit value of an IPv6 literal (already checked by `isIPv6`), a dotted IPv4 tail included. */
function ipv6Value(address: string): bigint {
  let text = address;
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const tail = ipv4Value(dotted[1]);
    text = text.slice(0, -dotted[1].length) + `${(tail >> 16n).toString(16)}:${(tail & 0xffffn).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const groupsOf = (part: string | undefined) => (part ? part.split(':') : []);
  const front = groupsOf(head);
  const back = groupsOf(rest);
  const groups = rest === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}
