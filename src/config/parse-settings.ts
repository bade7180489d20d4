/**
 * Parsers for the production settings. Each returns a value or a problem sentence (without the
 * setting's name, which the caller adds), so config.ts reports every wrong value at once.
 */
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';

export type Parsed<T> = { readonly value: T } | { readonly problem: string };

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

/** `*` (every service file) or service file names, with or without `.asmx`, case-insensitive. */
export function parseServiceList(raw: string, known: readonly string[]): Parsed<readonly string[] | null> {
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

function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
