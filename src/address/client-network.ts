/**
 * What "a client" is, in one place (docs/security.md, "What a client is"): the key the rate limit
 * (SIS_RATE_LIMIT), the access log's `client` and AuthCode's address layer count by. An IPv4
 * address is a client (carriers and schools share one among many people, which is why the SMS
 * limit per address is high), and so is an IPv6 address that carries one, however it is written
 * (IPv4-mapped, -translated, -compatible, 6to4, NAT64 in any of RFC 6052's layouts, Teredo): each
 * spelling counted apart would multiply a limit. Any other IPv6 address counts by the prefix its
 * subscriber holds (a /64 by default, SIS_CLIENT_IPV6_PREFIX): every IPv6 subscriber can rotate
 * through the addresses inside its prefix at will; and beside it by its /48 (a tunnel broker hands
 * out /48s). Which embeddings a list of trusted addresses believes is decided here too
 * (inNetworkList). Imports nothing of the service: every layer may use it.
 */
import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';

/** Prefix lengths IPv6 clients may be counted by: a subscriber's /64, or a site's /56 or /48. */
export const IPV6_PREFIXES = [64, 56, 48] as const;
export type Ipv6Prefix = (typeof IPV6_PREFIXES)[number];

/** The ways an IPv6 address carries an IPv4 one. */
export const EMBEDDINGS = ['mapped', 'translated', 'compatible', '6to4', 'nat64', 'teredo'] as const;
export type Embedding = (typeof EMBEDDINGS)[number];

/** RFC 6052 §2.2's prefix lengths: each puts the IPv4 address at its own place. */
export const NAT64_LENGTHS = [32, 40, 48, 56, 64, 96] as const;
export type Nat64Length = (typeof NAT64_LENGTHS)[number];

/** A NAT64 prefix a translator uses (SIS_CLIENT_NAT64_PREFIXES): its eight groups (host bits zero) and length. */
export interface Nat64Prefix {
  readonly groups: readonly number[];
  readonly length: Nat64Length;
}

/** The NAT64 prefixes configured beside the well-known one (none by default). */
export type Nat64Prefixes = readonly Nat64Prefix[];

const NO_NAT64: Nat64Prefixes = [];

/**
 * The client `address` counts as, for anything that counts or remembers clients: an IPv4 address
 * as it is; an IPv6 address that carries an IPv4 one for its client (embeddedIpv4) as that IPv4
 * address; an address of the local-use NAT64 prefix `64:ff9b:1::/48` under none of `nat64` (its
 * layout unknown) as the whole address, which stands for one IPv4 client whatever the layout;
 * any other IPv6 address as its first `ipv6Prefix` bits (`2001:db8:0:12::/64`); anything else
 * (a unix socket's '') as it is. Two spellings of one client always give one key.
 */
export function clientKey(address: string, ipv6Prefix: Ipv6Prefix, nat64: Nat64Prefixes = NO_NAT64): string {
  if (!address.includes(':') || !isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  const carried = carriedBy(groups, nat64);
  if (carried !== null) return carried.ipv4;
  return localUse(groups) ? groups.map((g) => g.toString(16)).join(':') : prefixOf(groups, ipv6Prefix);
}

/**
 * The /48 a native IPv6 address is in (a site, or a tunnel broker's customer: 65,536 /64s), which
 * the rate limit and the address layer count beside its prefix; null for IPv4, for IPv6 carrying
 * an IPv4 address (with `nat64`, the NAT64 prefixes configured) and for the local-use NAT64 prefix
 * (each of its addresses is one IPv4 client: clientKey).
 */
export function siteNetwork(address: string, nat64: Nat64Prefixes = NO_NAT64): string | null {
  if (!address.includes(':') || !isIPv6(address)) return null;
  const groups = ipv6Groups(address);
  return carriedBy(groups, nat64) === null && !localUse(groups) ? prefixOf(groups, 48) : null;
}

/**
 * The IPv4 address behind an IPv6 one, whichever way it is written (`::ffff:1.2.3.4`,
 * `::FFFF:0102:0304`, expanded): IPv4-mapped (`::ffff:0:0/96`, RFC 4291), IPv4-translated
 * (`::ffff:0:0:0/96`, RFC 7915), IPv4-compatible (`::/96`, deprecated by RFC 4291 but still
 * parsed; `::` and `::1` are not), 6to4 (`2002::/16`, RFC 3056: bits 16 to 47), NAT64's
 * well-known prefix (`64:ff9b::/96`, RFC 6052) and the prefixes in `nat64` (each read in RFC
 * 6052 §2.2's layout for its length), Teredo (`2001::/32`, RFC 4380: the client's address is the
 * last 32 bits inverted). A client behind one of them is whoever holds that IPv4 address. Null
 * when there is none (the local-use prefix `64:ff9b:1::/48` is read only as configured).
 */
export function embeddedIpv4(address: string, nat64: Nat64Prefixes = NO_NAT64): string | null {
  return address.includes(':') && isIPv6(address) ? (carriedBy(ipv6Groups(address), nat64)?.ipv4 ?? null) : null;
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

/** The IPv4 address an IPv6 address's groups carry, and how; null when they carry none. */
function carriedBy(g: readonly number[], nat64: Nat64Prefixes): { kind: Embedding; ipv4: string } | null {
  const last = (): string => dotted(g[6]!, g[7]!);
  if (zeros(g, 0, 4)) {
    if (g[4] === 0 && g[5] === 0xffff) return { kind: 'mapped', ipv4: last() };
    if (g[4] === 0xffff && g[5] === 0) return { kind: 'translated', ipv4: last() };
    // Not :: and ::1.
    if (g[4] === 0 && g[5] === 0 && g[6] !== 0) return { kind: 'compatible', ipv4: last() };
    return null;
  }
  for (const prefix of nat64) if (under(g, prefix)) return { kind: 'nat64', ipv4: nat64Ipv4(g, prefix.length) };
  if (g[0] === 0x2002) return { kind: '6to4', ipv4: dotted(g[1]!, g[2]!) };
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(g, 2, 6)) return { kind: 'nat64', ipv4: last() };
  if (g[0] === 0x2001 && g[1] === 0) return { kind: 'teredo', ipv4: dotted(g[6]! ^ 0xffff, g[7]! ^ 0xffff) };
  return null;
}

/** In the local-use NAT64 prefix `64:ff9b:1::/48` (RFC 8215). */
const localUse = (g: readonly number[]): boolean => g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1;

const byteOf = (g: readonly number[], i: number): number => (i % 2 === 0 ? g[i >> 1]! >> 8 : g[i >> 1]! & 0xff);

/** Whether the groups start with the prefix's first `length` bits (a multiple of 8). */
function under(g: readonly number[], prefix: Nat64Prefix): boolean {
  for (let i = 0; i < prefix.length / 8; i++) if (byteOf(g, i) !== byteOf(prefix.groups, i)) return false;
  return true;
}

/**
 * RFC 6052 §2.2: the IPv4 address's four bytes follow the prefix, skipping bits 64 to 71 (the
 * "u" octet); the suffix after them is not read.
 */
function nat64Ipv4(g: readonly number[], length: Nat64Length): string {
  const bytes: number[] = [];
  for (let i = length / 8; bytes.length < 4; i++) if (i !== 8) bytes.push(byteOf(g, i));
  return bytes.join('.');
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

/**
 * One entry of SIS_CLIENT_NAT64_PREFIXES (`64:ff9b:1::/48`), or what is wrong with it: an IPv6
 * prefix of one of RFC 6052's lengths, no bits set past it, not the well-known prefix's space
 * (`64:ff9b::/96` is read as a /96 always, RFC 6052 §2.1).
 */
export function nat64Prefix(entry: string): { value: Nat64Prefix } | { problem: string } {
  const [address, bits, extra] = entry.split('/');
  const length = Number(bits);
  const expected = `expected an IPv6 prefix of length ${NAT64_LENGTHS.join(', ')} such as 64:ff9b:1::/48`;
  if (address === undefined || !isIPv6(address) || address.includes('%') || extra !== undefined)
    return { problem: `${JSON.stringify(entry)}: ${expected}` };
  if (bits === undefined || !/^\d+$/.test(bits) || !(NAT64_LENGTHS as readonly number[]).includes(length))
    return { problem: `${JSON.stringify(entry)}: ${expected} (RFC 6052's layouts)` };
  const groups = ipv6Groups(address);
  for (let i = length / 8; i < 16; i++)
    if (byteOf(groups, i) !== 0) return { problem: `${JSON.stringify(entry)}: bits set past /${length}` };
  const wellKnown = [0x64, 0xff9b, 0, 0, 0, 0, 0, 0];
  const overlap = Math.min(length, 96) / 8;
  if ([...Array(overlap).keys()].every((i) => byteOf(groups, i) === byteOf(wellKnown, i)) && length !== 96)
    return { problem: `${JSON.stringify(entry)}: the well-known prefix 64:ff9b::/96 is read as a /96 always` };
  return { value: { groups, length: length as Nat64Length } };
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

/** Which embeddings of a listed IPv4 address a list believes (SIS_SMS_TRUSTED_EMBEDDED), and how NAT64 is read. */
export interface EmbeddedTrust {
  /** Beside IPv4-mapped (always: the same host). */
  readonly embedded: ReadonlySet<Embedding>;
  readonly nat64: Nat64Prefixes;
}

const MAPPED_ONLY: EmbeddedTrust = { embedded: new Set(), nat64: NO_NAT64 };

/**
 * Whether `address` is in `list` (listed: as written, an IPv4-mapped one as its IPv4 address); an
 * IPv6 address carrying a listed IPv4 one in another way (6to4, NAT64, Teredo, …) only when
 * `trust` names that embedding: a relay or translator is not the network the operator listed.
 */
export function inNetworkList(list: BlockList, address: string, trust: EmbeddedTrust = MAPPED_ONLY): boolean {
  if (listed(list, address)) return true;
  if (trust.embedded.size === 0 || !address.includes(':') || !isIPv6(address)) return false;
  const carried = carriedBy(ipv6Groups(address), trust.nat64);
  return carried !== null && trust.embedded.has(carried.kind) && list.check(carried.ipv4, 'ipv4');
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
