/**
 * The network a client address counts as in the address layer (docs/sms.md): an IPv4 address
 * itself (carriers and schools share one among many people, which is why its limit is high), and
 * so an IPv6 address that carries one (IPv4-mapped, 6to4, NAT64), another IPv6 address by the
 * prefix its subscriber holds (a /64 by default: every IPv6 subscriber can rotate through the
 * addresses inside its prefix at will, so counting them one by one would multiply the limit) and,
 * under a higher limit, by its /48 (a tunnel broker hands out /48s), and the networks an operator trusts (SIS_SMS_TRUSTED_ADDRESSES), which
 * the address layer does not count at all.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Prefix lengths IPv6 addresses may be counted by: a subscriber's /64, or a site's /56 or /48. */
export const IPV6_PREFIXES = [64, 56, 48] as const;
export type Ipv6Prefix = (typeof IPV6_PREFIXES)[number];

/**
 * What the address layer counts `address` as: an IPv4 address as it is; an IPv6 address that
 * carries an IPv4 one for its client (IPv4-mapped, 6to4, NAT64: embeddedIpv4) as that IPv4
 * address; any other IPv6 address as its first `prefix` bits (`2001:db8:0:12::/64`); anything
 * else (a unix socket's '') as it is.
 */
export function countedNetwork(address: string, prefix: Ipv6Prefix): string {
  if (!address.includes(':') || !isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  return ipv4Of(groups) ?? prefixOf(groups, prefix);
}

/**
 * The /48 a native IPv6 address is in (a site, or a tunnel broker's customer: 65,536 /64s), which
 * the address layer counts beside its prefix; null for IPv4 and for IPv6 carrying an IPv4 address.
 */
export function siteNetwork(address: string): string | null {
  if (!address.includes(':') || !isIPv6(address)) return null;
  const groups = ipv6Groups(address);
  return ipv4Of(groups) === null ? prefixOf(groups, 48) : null;
}

/**
 * The IPv4 address behind an IPv6 one, whichever way it is written (`::ffff:1.2.3.4`,
 * `::ffff:0102:0304`, expanded, upper case): IPv4-mapped (`::ffff:0:0/96`), 6to4 (`2002::/16`,
 * RFC 3056: bits 16 to 47) and NAT64/SIIT's well-known prefix (`64:ff9b::/96`, RFC 6052: the last
 * 32 bits). A client behind one of them is whoever holds that IPv4 address, and each spelling
 * counted apart would multiply its limit. Null when there is none.
 */
export function embeddedIpv4(address: string): string | null {
  return address.includes(':') && isIPv6(address) ? ipv4Of(ipv6Groups(address)) : null;
}

function ipv4Of(g: readonly number[]): string | null {
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dotted(g[6]!, g[7]!);
  return null;
}

function dotted(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** `2001:db8:0:12::/64`: the first `prefix` bits of the groups. */
function prefixOf(groups: readonly number[], prefix: Ipv6Prefix): string {
  const whole = prefix >> 4;
  const kept = groups.slice(0, whole);
  // A /56 keeps the high byte of its fourth group.
  if (prefix % 16 !== 0) kept.push(groups[whole]! & (0xffff << (16 - (prefix % 16))) & 0xffff);
  return `${kept.map((g) => g.toString(16)).join(':')}::/${prefix}`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail read, a zone dropped). */
function ipv6Groups(address: string): number[] {
  const plain = address.split('%')[0]!;
  const [head, tail] = plain.includes('::') ? (plain.split('::') as [string, string]) : [plain, null];
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const high = parse(head);
  if (tail === null) return high;
  const low = parse(tail);
  return [...high, ...new Array<number>(8 - high.length - low.length).fill(0), ...low];
}

/** Addresses and CIDR ranges (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`); null when the list is empty. */
export function networkList(entries: readonly string[]): BlockList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const family = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/** Whether `address` is in `list`; an IPv6 address carrying an IPv4 one (embeddedIpv4) is looked up as that too. */
export function inNetworkList(list: BlockList, address: string): boolean {
  if (isIPv4(address)) return list.check(address, 'ipv4');
  if (!isIPv6(address)) return false;
  const v4 = embeddedIpv4(address);
  return list.check(address, 'ipv6') || (v4 !== null && list.check(v4, 'ipv4'));
}

/** A problem with one entry of an address list, or null when it is an address or a CIDR range. */
export function networkProblem(entry: string): string | null {
  const [address, bits, extra] = entry.split('/');
  const v4 = isIPv4(address ?? '');
  if (!v4 && !isIPv6(address ?? '')) return `${JSON.stringify(entry)} is not an IPv4 or IPv6 address`;
  if (extra !== undefined || (bits !== undefined && !/^\d{1,3}$/.test(bits)) || Number(bits) > (v4 ? 32 : 128))
    return `${JSON.stringify(entry)}: expected a prefix length of 0 to ${v4 ? 32 : 128} after /`;
  return null;
}
