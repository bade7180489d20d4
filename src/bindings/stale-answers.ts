import { isStreamed } from '../reply/reply.js';
import type { Reply } from '../reply/reply.js';
import { databaseCondition, errorCode } from '../store/db-errors.js';

/** How stale answers are kept and told fresh enough. */
export interface StaleOptions {
  /** The longest an answer is served after it was last known current (SIS_STALE_IF_ERROR_MS). */
  readonly maxAgeMs: number;
  /** Bytes of answers kept (SIS_STALE_ANSWERS_BYTES). */
  readonly maxBytes: number;
  /** The data version read last and when (the answer cache's, kept up to date there); absent without one. */
  readonly seen?: VersionSeen | undefined;
  readonly now?: () => number;
}

/** When the data version was last read from the database, and which it was (the answer cache's). */
export interface VersionSeen {
  /** Null before the first read. */
  version: string | null;
  /** When the read of it began (ms since the epoch): it was current at least then. */
  at: number;
}

/** A client's share of the budget (an eighth), and a /48's (a quarter: the clients of one site together). */
const CLIENT_SHARE = 1 / 8;
const SITE_SHARE = 1 / 4;
/** The askers an answer is charged to, at most: a later one finds it kept by others. */
const MAX_ASKERS = 4;

/** One client that asked for an answer: its clientKey, and the /48 it is in (a native IPv6 client's), else null. */
interface Asker {
  readonly client: string;
  readonly site: string | null;
}

interface Entry {
  readonly key: string;
  reply: Reply;
  bytes: number;
  /** The data version the answer was read at (cacheable operations with the answer cache on), else null. */
  version: string | null;
  /** When it was made. */
  at: number;
  /** Who asked for it, first asker first; each one's share is charged for it. */
  readonly askers: Asker[];
  /** Asked from two networks or more (kept before what one network asked). */
  shared: boolean;
}

/** What a client, or a /48, holds: the bytes of the answers it asked for and their keys, the oldest asked first. */
interface Share {
  bytes: number;
  readonly keys: Set<string>;
  readonly limit: number;
}

/**
 * The last answer of each read (an operation without `writes`) this instance made, served when the
 * database does not answer, as HTTP caches do with `stale-if-error` (RFC 5861): a blip of the
 * database every instance shares should not turn away a reader whose answer cannot have changed,
 * since every change goes through that database. Written only when an answer is made, read only
 * when a call failed because the database is unavailable or too many calls wait for it already
 * (not for a refused argument, a full disk or a read-only database), or when the call has waited
 * past its budget (SIS_STALE_AFTER_MS, dispatch.ts): while the database answers in time nothing
 * here is ever served, so the first change after it comes back is seen as before.
 *
 * An answer is served while the database confirmed it current at most `maxAgeMs` ago: one made
 * with a data version (the answer cache's) was current when this instance last read that same
 * version from the database (any request's read: a change by another instance, an import or an
 * erasure moves it); any other, when it was made. Never "until the database stopped answering":
 * what changed since the last read is not known.
 *
 * Bounded by bytes, for months as for minutes (issue 45):
 * - An answer past `maxAgeMs` since it was known current (or made at a version no longer current)
 *   can never be served again, and leaves before anything else.
 * - Every answer counts against the share of each client that asked for it (an eighth of the
 *   budget; a native IPv6 client's /48 also has a share, a quarter, for all of its clients): past
 *   its share, a client's oldest asks are forgotten, and an answer nobody's share holds any more
 *   leaves. So no client, nor a few together, holds more than their shares, whether their answers
 *   were asked by one of them or by all.
 * - Past the whole budget, answers asked from one network (an IPv4 address, or a /48) leave before
 *   those asked from two or more, least recently asked first; the answer being kept never leaves
 *   in favour of older ones.
 * An answer over a client's share, or a streamed one, is not kept. Keys are the answer cache's
 * (binding, operation, arguments).
 */
export class StaleAnswers {
  /** Answers asked from two networks or more; the most recently asked last. */
  readonly #shared = new Map<string, Entry>();
  /** Answers asked from one network; the most recently asked last. */
  readonly #single = new Map<string, Entry>();
  /** Answers without a data version, in the order they were made (the order they expire in). */
  readonly #made = new Map<string, Entry>();
  /** Keys of answers with a data version, by version (all of one expire together). */
  readonly #versions = new Map<string, Set<string>>();
  /** Each client's and each /48's share. */
  readonly #shares = new Map<string, Share>();
  readonly #now: () => number;
  readonly #clientLimit: number;
  readonly #siteLimit: number;
  #bytes = 0;
  /** When answers past their age were last dropped. */
  #sweptAt: number;
  /** Answers served from here (sis_answers_stale_total). */
  served = 0;

  constructor(private readonly options: StaleOptions) {
    this.#now = options.now ?? Date.now;
    this.#clientLimit = options.maxBytes * CLIENT_SHARE;
    this.#siteLimit = options.maxBytes * SITE_SHARE;
    this.#sweptAt = this.#now();
  }

  /**
   * Keeps the answer just made for `key` (replacing the one before), asked by `client` (clientKey)
   * in `site` (its /48, siteNetwork; null for IPv4 and when the client is the /48).
   */
  keep(key: string, reply: Reply, version: string | null, client: string, site: string | null = null): void {
    const bytes = sizeOf(reply);
    const size = bytes === null ? Infinity : bytes + key.length * 2;
    let entry = this.#shared.get(key) ?? this.#single.get(key);
    if (size > this.#clientLimit) {
      // Not kept; nor is the answer before it, which this one replaces.
      if (entry !== undefined) this.#delete(entry);
      return;
    }
    const now = this.#now();
    if (entry === undefined) {
      entry = { key, reply, bytes: size, version, at: now, askers: [], shared: false };
      this.#bytes += size;
      this.#single.set(key, entry);
    } else {
      if (size !== entry.bytes) this.#resize(entry, size);
      if (entry.version !== version) {
        this.#unlist(entry);
        entry.version = version;
      } else if (version === null) this.#made.delete(key);
      entry.reply = reply;
      entry.at = now;
      this.#used(entry);
    }
    if (version === null) this.#made.set(key, entry);
    else {
      let keys = this.#versions.get(version);
      if (keys === undefined) this.#versions.set(version, (keys = new Set()));
      keys.add(key);
    }
    this.#ask(entry, client, site);
    if (this.#bytes > this.options.maxBytes || now - this.#sweptAt > this.options.maxAgeMs) this.#fit(entry, now);
  }

  /**
   * `client` (in `site`) asked for `key` and was answered without making it again (the answer
   * cache's hit): it counts as asked, by them and now. False when no answer is kept for `key`
   * (the caller keeps the one it served).
   */
  asked(key: string, client: string, site: string | null = null): boolean {
    const entry = this.#shared.get(key) ?? this.#single.get(key);
    if (entry === undefined) return false;
    this.#used(entry);
    this.#ask(entry, client, site);
    return true;
  }

  /**
   * The answer to serve instead of the failure `cause`, or undefined: only when the database is
   * unavailable and an answer for `key` was known current within maxAgeMs.
   */
  answer(key: string, cause: unknown): Reply | undefined {
    // The database unavailable, or too many calls already waiting for it (the bound answers at once),
    // or only a read-only server reachable (a switchover: the service keeps no connection to it).
    const condition = databaseCondition(cause);
    if (condition !== 'unavailable' && condition !== 'read-only' && errorCode(cause) !== 'ERR_DB_BUSY')
      return undefined;
    return this.late(key);
  }

  /**
   * The answer to serve for `key` to a read whose call has waited past its budget (still going on:
   * its answer, when it comes, replaces this one), or undefined when none was known current within
   * maxAgeMs.
   */
  late(key: string): Reply | undefined {
    const entry = this.#servable(key);
    if (entry === undefined) return undefined;
    this.served++;
    return entry.reply;
  }

  /** Whether an answer for `key` would be served now (see `late`). */
  has(key: string): boolean {
    return this.#servable(key) !== undefined;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** How many answers are kept. */
  get size(): number {
    return this.#single.size + this.#shared.size;
  }

  #servable(key: string): Entry | undefined {
    const entry = this.#shared.get(key) ?? this.#single.get(key);
    if (entry === undefined) return undefined;
    let knownAt = entry.at;
    if (entry.version !== null) {
      const seen = this.options.seen;
      // The data changed after it was made (or no read tells): it may not be today's answer.
      if (seen === undefined || entry.version !== seen.version) return undefined;
      knownAt = Math.max(knownAt, seen.at);
    }
    return this.#now() - knownAt > this.options.maxAgeMs ? undefined : entry;
  }

  /** `client` asked for `entry`: charged to its share and its /48's (the first MAX_ASKERS only), or renewed there. */
  #ask(entry: Entry, client: string, site: string | null): void {
    const { askers, key } = entry;
    if (site === client) site = null;
    for (const asker of askers)
      if (asker.client === client) {
        // Asked again: the newest of its asks, and of its site's.
        this.#renew(client, key);
        if (site !== null) this.#renew(site, key);
        return;
      }
    if (askers.length >= MAX_ASKERS) return;
    const siteCharged = site !== null && askers.some((a) => a.site === site);
    askers.push({ client, site });
    if (!entry.shared && askers.length > 1 && networks(askers) > 1) {
      entry.shared = true;
      this.#single.delete(key);
      this.#shared.set(key, entry);
    }
    this.#charge(client, this.#clientLimit, entry);
    if (site !== null) {
      if (siteCharged) this.#renew(site, key);
      else this.#charge(site, this.#siteLimit, entry);
    }
  }

  /** Charges `entry` to `holder`'s share; past it, the holder's oldest asks (never `entry`) are forgotten. */
  #charge(holder: string, limit: number, entry: Entry): void {
    let share = this.#shares.get(holder);
    if (share === undefined) this.#shares.set(holder, (share = { bytes: 0, keys: new Set(), limit }));
    share.bytes += entry.bytes;
    share.keys.add(entry.key);
    if (share.bytes > limit) this.#trim(holder, share, entry);
  }

  #trim(holder: string, share: Share, keep: Entry | null): void {
    for (const key of share.keys) {
      if (share.bytes <= share.limit) return;
      if (key === keep?.key) continue;
      this.#forget(this.#shared.get(key) ?? this.#single.get(key)!, holder);
    }
  }

  #renew(holder: string, key: string): void {
    const keys = this.#shares.get(holder)?.keys;
    if (keys === undefined || !keys.delete(key)) return;
    keys.add(key);
  }

  /**
   * `holder` (a client, or a /48 with every client of it) no longer counts as asking for `entry`;
   * the answer leaves once nobody does.
   */
  #forget(entry: Entry, holder: string): void {
    const { askers } = entry;
    const before = holders(askers);
    for (let i = askers.length - 1; i >= 0; i--)
      if (askers[i]!.client === holder || askers[i]!.site === holder) askers.splice(i, 1);
    if (askers.length === 0) {
      this.#delete(entry, before);
      return;
    }
    const after = holders(askers);
    for (const h of before) if (!after.includes(h)) this.#uncharge(h, entry);
    if (entry.shared && networks(askers) < 2) {
      entry.shared = false;
      this.#shared.delete(entry.key);
      this.#single.set(entry.key, entry);
    }
  }

  #uncharge(holder: string, entry: Entry): void {
    const share = this.#shares.get(holder);
    if (share === undefined || !share.keys.delete(entry.key)) return;
    share.bytes -= entry.bytes;
    if (share.keys.size === 0) this.#shares.delete(holder);
  }

  /** The answer for `entry.key` changed size: so do its askers' shares (and those past theirs trim). */
  #resize(entry: Entry, size: number): void {
    const grown = size - entry.bytes;
    entry.bytes = size;
    this.#bytes += grown;
    const charged = holders(entry.askers);
    for (const h of charged) this.#shares.get(h)!.bytes += grown;
    if (grown > 0)
      for (const h of charged) {
        const share = this.#shares.get(h);
        if (share !== undefined && share.bytes > share.limit) this.#trim(h, share, entry);
      }
  }

  /** Most recently asked now: last of its pool. */
  #used(entry: Entry): void {
    const pool = entry.shared ? this.#shared : this.#single;
    pool.delete(entry.key);
    pool.set(entry.key, entry);
  }

  /** Past its age first, then past the budget: asked from one network before from several, least recently asked first; never `keep`. */
  #fit(keep: Entry, now: number): void {
    this.#expire(now);
    const max = this.options.maxBytes;
    for (const pool of [this.#single, this.#shared])
      for (const entry of pool.values()) {
        if (this.#bytes <= max) return;
        if (entry !== keep) this.#delete(entry);
      }
  }

  /** Drops every answer that can never be served again: past maxAgeMs since known current, or made at a version since moved. */
  #expire(now: number): void {
    this.#sweptAt = now;
    const oldest = now - this.options.maxAgeMs;
    for (const entry of this.#made.values()) {
      if (entry.at >= oldest) break;
      this.#delete(entry);
    }
    const seen = this.options.seen;
    for (const [version, keys] of this.#versions) {
      const current = seen !== undefined && seen.version === version;
      if (current && seen.at >= oldest) continue;
      for (const key of keys) {
        const entry = (this.#shared.get(key) ?? this.#single.get(key))!;
        if (!current || entry.at < oldest) this.#delete(entry);
      }
    }
  }

  /** Out of the expiry order (#made or its version's keys). */
  #unlist(entry: Entry): void {
    if (entry.version === null) {
      this.#made.delete(entry.key);
      return;
    }
    const keys = this.#versions.get(entry.version)!;
    keys.delete(entry.key);
    if (keys.size === 0) this.#versions.delete(entry.version);
  }

  #delete(entry: Entry, charged = holders(entry.askers)): void {
    this.#bytes -= entry.bytes;
    (entry.shared ? this.#shared : this.#single).delete(entry.key);
    this.#unlist(entry);
    for (const h of charged) this.#uncharge(h, entry);
  }
}

/** The shares an answer asked by `askers` is charged to: each client's, and each /48's once. */
function holders(askers: readonly Asker[]): string[] {
  const out: string[] = [];
  for (const { client, site } of askers) {
    out.push(client);
    if (site !== null && !out.includes(site)) out.push(site);
  }
  return out;
}

/** How many networks (an IPv4 address or other client, a /48) `askers` come from. */
function networks(askers: readonly Asker[]): number {
  const seen: string[] = [];
  for (const { client, site } of askers) {
    const network = site ?? client;
    if (!seen.includes(network)) seen.push(network);
  }
  return seen.length;
}

/** Bytes held by a reply's body (UTF-16 strings count twice); null for a streamed one. */
export function sizeOf(reply: Reply): number | null {
  const { body } = reply;
  if (typeof body === 'string') return body.length * 2;
  if (isStreamed(body)) return null;
  let n = 0;
  for (const piece of body) n += piece.length;
  return n;
}
