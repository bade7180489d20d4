/**
 * How a setting's text becomes its value: the kinds the settings table (settings.ts) gives each
 * entry, and the parsers of the production settings. Each returns a value or a problem sentence
 * (without the setting's name, which the reader adds), so every wrong value is reported at once.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';
import { availableParallelism } from 'node:os';
import { IPV6_PREFIXES, nat64Prefix } from '../address/client-network.js';
import type { Ipv6Prefix, Nat64Prefix } from '../address/client-network.js';
import { services } from '../operations/index.js';
import { DatabaseUrlError, parseDatabaseUrl } from '../store/open/database-url.js';

export type Parsed<T> = { readonly value: T } | { readonly problem: string };

/** A setting's kind: how its text is read, and its value when neither the operator nor the table gives one. */
export interface Kind<T> {
  readonly parse: (raw: string) => Parsed<T>;
  /** The value of a setting left unset whose table default is "" too. */
  readonly unset: T;
  /** The text a problem echoes; null: never echoed (a key pasted in clear, a URL's password). */
  readonly shown?: (raw: string) => string | null;
}

/** A whole number from min to max; unset without a default: min. */
export function int(min: number, max: number): Kind<number> {
  return { parse: (raw) => wholeNumber(raw, min, max), unset: min };
}

/** A whole number from min to max, or null when unset without a default (the consumer's own default then). */
export function optionalInt(min: number, max: number): Kind<number | null> {
  return { parse: (raw) => wholeNumber(raw, min, max), unset: null };
}

function wholeNumber(raw: string, min: number, max: number): Parsed<number> {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    return { problem: `expected a whole number from ${min} to ${max}` };
  return { value: n };
}

/** true/false, also 1/0, yes/no, on/off, in any case. */
export const bool: Kind<boolean> = {
  parse: (raw) =>
    /^(1|true|yes|on)$/i.test(raw)
      ? { value: true }
      : /^(0|false|no|off)$/i.test(raw)
        ? { value: false }
        : { problem: 'expected true or false' },
  unset: false,
};

/** One of the choices, in any case; the first when unset without a default. */
export function oneOf<const C extends readonly [string, ...string[]]>(choices: C): Kind<C[number]> {
  return {
    parse: (raw) => {
      const found = choices.find((c) => c === raw.toLowerCase());
      return found !== undefined ? { value: found } : { problem: `expected one of ${choices.join(', ')}` };
    },
    unset: choices[0],
  };
}

/** Any text, taken as written. */
export const text: Kind<string> = { parse: (raw) => ({ value: raw }), unset: '' };

/** Text that `ok` accepts; otherwise "expected <expected>". */
export function textWhere(ok: (raw: string) => boolean, expected: string): Kind<string> {
  return { parse: (raw) => (ok(raw) ? { value: raw } : { problem: `expected ${expected}` }), unset: '' };
}

/** An absolute http(s) URL, or null when unset. */
export const httpUrl: Kind<string | null> = {
  parse: (raw) => (isHttpUrl(raw) ? { value: raw } : { problem: 'expected an absolute http:// or https:// URL' }),
  unset: null,
};

export function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Read by its own parser; blank text (spaces only) is `unset`. */
export function parsed<T>(
  parse: (raw: string) => Parsed<T>,
  unset: T,
  shown?: (raw: string) => string | null,
): Kind<T> {
  return { parse: (raw) => (raw.trim() === '' ? { value: unset } : parse(raw)), unset, ...(shown && { shown }) };
}

/** A URL path, returned with leading and trailing slash ("/" or "/School/"). */
export const basePath: Kind<string> = {
  parse: (raw) => {
    const withSlash = raw.endsWith('/') ? raw : `${raw}/`;
    return /^\/([A-Za-z0-9._~-]+\/)*$/.test(withSlash)
      ? { value: withSlash }
      : { problem: 'expected a path such as / or /School/' };
  },
  unset: '/',
};

/** A fraction from 0 to 1. */
export const fraction: Kind<number> = {
  parse: (raw) => {
    const n = Number(raw);
    return /^\s*(0|1|0?\.\d+|1\.0*)\s*$/.test(raw) && n >= 0 && n <= 1
      ? { value: n }
      : { problem: 'expected a fraction from 0 to 1, such as 1, 0.5 or 0.01' };
  },
  unset: 1,
};

/** A host name or IP address. */
export function isHostName(raw: string): boolean {
  return isIP(raw) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(raw);
}

/** Checked here as the store reads it; a problem shows the URL without its password, so the value is never echoed. */
export const databaseUrl: Kind<string> = {
  parse: (raw) => {
    try {
      parseDatabaseUrl(raw);
      return { value: raw };
    } catch (error) {
      if (!(error instanceof DatabaseUrlError)) throw error;
      return { problem: error.message };
    }
  },
  unset: '',
  shown: () => null,
};

/** `*` or service file names; null: every service file. */
export const serviceList: Kind<readonly string[] | null> = parsed(
  (raw) =>
    parseServiceList(
      raw,
      services.map((s) => s.name),
    ),
  null,
);

/** A Redis URL, echoed without its password. */
export const redisUrl: Kind<string | null> = {
  parse: (raw) =>
    /^rediss?:\/\/[^\s]+$/.test(raw)
      ? { value: raw }
      : { problem: 'expected redis://[user:password@]host[:port][/db] or rediss://…' },
  unset: null,
  shown: (raw) => raw.replace(/\/\/[^@/]*@/, '//***@'),
};

/** A public base URL, returned without trailing slashes. */
export const publicUrl: Kind<string | null> = {
  parse: (raw) => (isHttpUrl(raw) ? { value: raw.replace(/\/+$/, '') } : httpUrl.parse(raw)),
  unset: null,
};

/** The legacy service's base URL, returned with a trailing slash. */
export const legacyUrl: Kind<string | null> = {
  parse: (raw) => {
    const url = httpUrl.parse(raw);
    if ('problem' in url || url.value === null) return url;
    if (/[?#]/.test(url.value)) return { problem: 'expected a base URL without query or fragment' };
    return { value: url.value.endsWith('/') ? url.value : `${url.value}/` };
  },
  unset: null,
};

export interface RateLimit {
  readonly limit: number;
  readonly windowMs: number;
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** `N/window`: `100/1s`, `100/s`, `6000/1m`, `50/500ms`, `10000/1h`. */
export function parseRateLimit(raw: string): Parsed<RateLimit> {
  const m = /^\s*(\d+)\s*\/\s*(\d*)\s*(ms|s|m|min|h)\s*$/i.exec(raw);
  const problem = 'expected N/window such as 100/1s, 6000/1m or 50/500ms';
  if (m === null) return { problem };
  const limit = Number(m[1]);
  const windowMs = (m[2] === '' ? 1 : Number(m[2])) * UNIT_MS[m[3]!.toLowerCase()]!;
  if (!Number.isSafeInteger(limit) || limit < 1) return { problem: `${problem} (N at least 1)` };
  if (!Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > 86_400_000) {
    return { problem: `${problem} (a window from 1ms to 24h)` };
  }
  return { value: { limit, windowMs } };
}

/** `sha256:HEX` entries, comma-separated: the digests of the accepted keys. */
export function parseApiKeys(raw: string): Parsed<readonly Buffer[]> {
  const keys: Buffer[] = [];
  for (const entry of splitList(raw)) {
    const m = /^sha256:([0-9a-f]{64})$/i.exec(entry);
    if (m === null) {
      // Never echo the entry: it may be a key pasted in clear.
      return { problem: `entry ${keys.length + 1} is not sha256:<64 hex digits> (make one with: sis hash-key)` };
    }
    keys.push(Buffer.from(m[1]!, 'hex'));
  }
  return { value: keys };
}

/** Addresses and CIDR blocks, IPv4 or IPv6, comma-separated; returned normalised as `addr/prefix`. */
export function parseCidrList(raw: string): Parsed<readonly string[]> {
  const blocks: string[] = [];
  for (const entry of splitList(raw)) {
    const slash = entry.indexOf('/');
    const addr = slash < 0 ? entry : entry.slice(0, slash);
    const family = isIP(addr);
    const max = family === 4 ? 32 : 128;
    const prefixText = slash < 0 ? String(max) : entry.slice(slash + 1);
    const prefix = Number(prefixText);
    if (family === 0 || !/^\d{1,3}$/.test(prefixText) || prefix > max) {
      return {
        problem: `${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR block (e.g. 10.0.0.0/8, 2001:db8::/32)`,
      };
    }
    blocks.push(`${addr}/${prefix}`);
  }
  return { value: blocks };
}

/** 64, 56 or 48 (a leading / allowed): the prefix an IPv6 client is counted by. */
export function parseIpv6Prefix(raw: string): Parsed<Ipv6Prefix> {
  const n = Number(raw.trim().replace(/^\//, ''));
  return (IPV6_PREFIXES as readonly number[]).includes(n)
    ? { value: n as Ipv6Prefix }
    : { problem: `expected one of ${IPV6_PREFIXES.join(', ')} (the prefix an IPv6 subscriber holds)` };
}

/** NAT64 prefixes with their lengths (`64:ff9b:1::/48,2001:db8:64::/96`), comma-separated. */
export function parseNat64Prefixes(raw: string): Parsed<readonly Nat64Prefix[]> {
  const prefixes: Nat64Prefix[] = [];
  for (const entry of splitList(raw)) {
    const read = nat64Prefix(entry);
    if ('problem' in read) return read;
    prefixes.push(read.value);
  }
  return { value: prefixes };
}

/** SIS_RATE_LIMIT_IPV6_48: `Nx`, N times SIS_RATE_LIMIT's count, or a count of requests; 0 = not counted. */
export type SiteAllowance = { readonly times: number } | { readonly requests: number };

export function parseSiteAllowance(raw: string): Parsed<SiteAllowance> {
  const m = /^\s*(\d{1,9})\s*(x?)\s*$/i.exec(raw);
  if (m === null) return { problem: 'expected Nx (N times SIS_RATE_LIMIT’s count, e.g. 16x) or a number of requests' };
  const n = Number(m[1]);
  return { value: m[2] === '' ? { requests: n } : { times: n } };
}

/** The blocks parseCidrList returns (`addr/prefix`), as the BlockList that checks an address against them. */
export function cidrBlockList(blocks: readonly string[]): BlockList {
  const list = new BlockList();
  for (const block of blocks) {
    const [addr, prefix] = block.split('/') as [string, string];
    list.addSubnet(addr, Number(prefix), isIPv4(addr) ? 'ipv4' : 'ipv6');
  }
  return list;
}

/** `*` (every service file) or service file names, with or without `.asmx`, case-insensitive. */
function parseServiceList(raw: string, known: readonly string[]): Parsed<readonly string[] | null> {
  const names = splitList(raw).map((n) => n.replace(/\.asmx$/i, ''));
  if (names.length === 0 || names.includes('*')) return { value: null };
  const byLower = new Map(known.map((k) => [k.toLowerCase(), k]));
  const unknown = names.filter((n) => !byLower.has(n.toLowerCase()));
  if (unknown.length > 0)
    return { problem: `unknown service file ${unknown.join(', ')}; expected * or some of ${known.join(', ')}` };
  return { value: names.map((n) => byLower.get(n.toLowerCase())!) };
}

/** A number of worker processes, or `auto` for one per core. */
export function parseWorkers(raw: string): Parsed<number> {
  if (/^auto$/i.test(raw.trim())) return { value: availableParallelism() };
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || n < 1 || n > 256) return { problem: 'expected auto or a whole number from 1 to 256' };
  return { value: n };
}

/** Comma-separated items, trimmed, empty ones dropped. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Beside the legacy service (src/shadow): a request's mode. */
export type ShadowMode = 'off' | 'legacy' | 'compare';
const SHADOW_MODES: readonly ShadowMode[] = ['off', 'legacy', 'compare'];

/** SIS_SHADOW as written: the default mode and each `name=mode` (names checked against the contract at start). */
export interface ShadowModeSpec {
  readonly default: ShadowMode;
  readonly overrides: readonly (readonly [string, ShadowMode])[];
}

/** `legacy,GetTokenDevice=off,NotificationNotes=compare`: a default, then overrides by operation or service file. */
export function parseShadowModes(raw: string): Parsed<ShadowModeSpec> {
  const [first, ...rest] = raw.split(',').map((part) => part.trim());
  // Modes in any case, as the other choices; names as written (an operation's is case-sensitive).
  const modeText = (text: string): string => text.toLowerCase();
  const defaultMode = modeText(first!);
  if (!isShadowMode(defaultMode))
    return { problem: `the first entry is the default mode (off, legacy or compare), not ${JSON.stringify(first)}` };
  const overrides: [string, ShadowMode][] = [];
  for (const part of rest) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    const mode = modeText(part.slice(eq + 1).trim());
    if (eq <= 0 || name === '')
      return { problem: `each override is NAME=MODE (an operation or a service file), not ${JSON.stringify(part)}` };
    if (!isShadowMode(mode))
      return { problem: `the mode of ${name} is off, legacy or compare, not ${JSON.stringify(mode)}` };
    if (overrides.some(([n]) => n.toLowerCase() === name.toLowerCase())) return { problem: `${name} is given twice` };
    overrides.push([name, mode]);
  }
  return { value: { default: defaultMode, overrides } };
}

function isShadowMode(value: string): value is ShadowMode {
  return (SHADOW_MODES as readonly string[]).includes(value);
}
