/**
 * What "a client" is, in one place (docs/security.md, "What a client is"): the key the rate limit
 * (SIS_RATE_LIMIT), the access log's `client` and AuthCode's address layer count by. An IPv4
 * address is a client (carriers and schools share one among many people, which is why the SMS
 * limit per address is high), and so is an IPv6 address that carries one, however it is written
 * (IPv4-mapped, -translated, -compatible, 6to4, NAT64, Teredo): each spelling counted apart
 * would multiply a limit. Any other IPv6 address counts by the prefix its subscriber holds (a /64
 * by default, SIS_CLIENT_IPV6_PREFIX): every IPv6 subscriber can rotate through the addresses
 * inside its prefix at will. The address layer also counts a native IPv6 client's /48 (a tunnel
 * broker hands out /48s), and does not count the networks an operator trusts
 * (SIS_SMS_TRUSTED_ADDRESSES). Imports nothing of the service: every layer may use it.
 */
import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';

/** Prefix lengths IPv6 clients may be counted by: a subscriber's /64, or a site's /56 or /48. */
export const IPV6_PREFIXES = [64, 56, 48] as const;
export type Ipv6Prefix = (typeof IPV6_PREFIXES)[number];

/**
 * The client `address` counts as, for anything that counts or remembers clients: an IPv4 address
 * as it is; an IPv6 address that carries an IPv4 one for its client (embeddedIpv4) as that IPv4
 * address; any other IPv6 address as its first `ipv6Prefix` bits (`2001:db8:0:12::/64`); anything
 * else (a unix socket's '') as it is. Two spellings of one client always give one key.
 */
export function clientKey(address: string, ipv6Prefix: Ipv6Prefix): string {
  if (!address.includes(':') || !isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  return ipv4Of(groups) ?? prefixOf(groups, ipv6Prefix);
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
 * `::FFFF:0102:0304`, expanded): IPv4-mapped (`::ffff:0:0/96`, RFC 4291), IPv4-translated
 * (`::ffff:0:0:0/96`, RFC 7915), IPv4-compatible (`::/96`, deprecated by RFC 4291 but still
 * parsed; `::` and `::1` are not), 6to4 (`2002::/16`, RFC 3056: bits 16 to 47), NAT64's
 * well-known prefix (`64:ff9b::/96`, RFC 6052) and local-use prefix (`64:ff9b:1::/48`, RFC 8215;
 * read as a /96: the last 32 bits), Teredo (`2001::/32`, RFC 4380: the client's address is the
 * last 32 bits inverted). A client behind one of them is whoever holds that IPv4 address. Null
 * when there is none.
 */
export function embeddedIpv4(address: string): string | null {
  return address.includes(':') && isIPv6(address) ? ipv4Of(ipv6Groups(address)) : null;
}

/**
 * An IPv4-mapped address (`::ffff:10.0.0.1`, in any spelling) as its IPv4 address, which it is:
 * the same host, seen through a dual-stack socket. Anything else as it is: the other embeddings
 * name a translator or relay as the peer, so lists of trusted or allowed addresses match them as
 * written.
 */
export function unmapped(address: string): string {
  if (!address.includes(':') || !isIPv6(address)) return address;
  const g = ipv6Groups(address);
  return zeros(g, 0, 5) && g[5] === 0xffff ? dotted(g[6]!, g[7]!) : address;
}

function ipv4Of(g: readonly number[]): string | null {
  const last = (): string => dotted(g[6]!, g[7]!);
  if (zeros(g, 0, 4)) {
    if (g[4] === 0 && g[5] === 0xffff) return last(); // mapped
    if (g[4] === 0xffff && g[5] === 0) return last(); // translated
    if (g[4] === 0 && g[5] === 0 && g[6] !== 0) return last(); // compatible (not ::, ::1)
    return null;
  }
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(g, 2, 6) || g[2] === 1)) return last();
  if (g[0] === 0x2001 && g[1] === 0) return dotted(g[6]! ^ 0xffff, g[7]! ^ 0xffff);
  return null;
}

const zeros = (g: readonly number[], from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);

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

/**
 * Whether `address` is in `list` (trusted proxies, allow-lists): as written, an IPv4-mapped one
 * as its IPv4 address (unmapped); never what is not an IP address.
 */
export function listed(list: BlockList, address: string): boolean {
  const plain = unmapped(address);
  const family = isIP(plain);
  return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** Whether `address` is in `list` (listed); an IPv6 address carrying an IPv4 one (embeddedIpv4) is looked up as that too. */
export function inNetworkList(list: BlockList, address: string): boolean {
  const v4 = embeddedIpv4(address);
  return listed(list, address) || (v4 !== null && list.check(v4, 'ipv4'));
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
