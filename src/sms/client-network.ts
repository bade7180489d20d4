/**
 * The network a client address counts as in the address layer (docs/sms.md): an IPv4 address
 * itself (carriers and schools share one among many people, which is why its limit is high), an
 * IPv6 address by the prefix its subscriber holds (a /64 by default: every IPv6 subscriber can
 * rotate through the addresses inside its prefix at will, so counting them one by one would
 * multiply the limit), and the networks an operator trusts (SIS_SMS_TRUSTED_ADDRESSES), which
 * the address layer does not count at all.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Prefix lengths IPv6 addresses may be counted by: a subscriber's /64, or a site's /56 or /48. */
export const IPV6_PREFIXES = [64, 56, 48] as const;
export type Ipv6Prefix = (typeof IPV6_PREFIXES)[number];

/**
 * What the address layer counts `address` as: an IPv4 address as it is; an IPv6 address as its
 * first `prefix` bits (`2001:db8:0:12::/64`); anything else (a unix socket's '') as it is.
 */
export function countedNetwork(address: string, prefix: Ipv6Prefix): string {
  if (!address.includes(':') || !isIPv6(address)) return address;
  const groups = ipv6Groups(address);
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

/** Whether `address` is in `list` (IPv4 addresses also in their `::ffff:` form). */
export function inNetworkList(list: BlockList, address: string): boolean {
  if (isIPv4(address)) return list.check(address, 'ipv4');
  return isIPv6(address) && list.check(address, 'ipv6');
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
