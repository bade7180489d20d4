import { isStreamed } from '../reply/reply.js';
import type { Reply } from '../reply/reply.js';
import { databaseCondition, errorCode } from '../store/db-errors.js';

/** How stale answers are kept and told fresh enough. */
export interface StaleOptions {
  /** The longest an answer is served after it was last known current (SIS_STALE_IF_ERROR_MS). */
  readonly maxAgeMs: number;
  /** Bytes of answers kept (SIS_STALE_ANSWERS_BYTES). */
  readonly maxBytes: number;
  readonly now?: () => number;
}

/** When the data version was last read from the database, and which it was (the answer cache's). */
export interface VersionSeen {
  /** Null before the first read. */
  version: string | null;
  /** When the read of it began (ms since the epoch): it was current at least then. */
  at: number;
}

interface Entry {
  readonly reply: Reply;
  readonly bytes: number;
  /** The data version the answer was read at (cacheable operations with the answer cache on), else null. */
  readonly version: string | null;
  /** When it was made. */
  readonly at: number;
  /** The one client that asked for it, or null once a second one did (kept before any client's own). */
  readonly client: string | null;
}

/**
 * The last answer of each read (an operation without `writes`) this instance made, served when the
 * database does not answer, as HTTP caches do with `stale-if-error` (RFC 5861): a blip of the
 * database every instance shares should not turn away a reader whose answer cannot have changed,
 * since every change goes through that database. Written only when an answer is made, read only
 * when a call failed because the database is unavailable or too many calls wait for it already
 * (not for a refused argument, a full disk or a read-only database): while the database answers nothing here is ever served, so the first
 * change after it comes back is seen as before.
 *
 * An answer is served while the database confirmed it current at most `maxAgeMs` ago: one made
 * with a data version (the answer cache's) was current when this instance last read that same
 * version from the database (any request's read: a change by another instance, an import or an
 * erasure moves it); any other, when it was made. Never "until the database stopped answering":
 * what changed since the last read is not known.
 *
 * Bounded by bytes. An answer asked by one client only is kept in that client's share (an eighth
 * of the budget: its own oldest leave first), and leaves before any answer two clients asked for,
 * so one client's one-off ids cannot push out what many ask for. An answer over an eighth of the
 * budget, or a streamed one, is not kept. Keys are the answer cache's (binding, operation, arguments).
 */
export class StaleAnswers {
  /** Answers two clients or more asked for; most recently made last. */
  readonly #shared = new Map<string, Entry>();
  /** Answers one client asked for; most recently made last. */
  readonly #single = new Map<string, Entry>();
  /** Each client's answers in #single (keys, most recently made last) and their bytes. */
  readonly #clients = new Map<string, { bytes: number; readonly keys: Set<string> }>();
  readonly #now: () => number;
  #bytes = 0;
  /** Answers served from here (sis_answers_stale_total). */
  served = 0;

  constructor(private readonly options: StaleOptions) {
    this.#now = options.now ?? Date.now;
  }

  /** Keeps the answer just made for `key` (replacing the one before), asked by `client` (clientKey). */
  keep(key: string, reply: Reply, version: string | null, client: string): void {
    const bytes = sizeOf(reply);
    if (bytes === null) return;
    const size = bytes + key.length * 2;
    const share = this.options.maxBytes / 8;
    if (size > share) return;
    const old = this.#shared.get(key) ?? this.#single.get(key);
    const owner = old === undefined || old.client === client ? client : null;
    if (old !== undefined) this.#drop(key, old);
    const entry: Entry = { reply, bytes: size, version, at: this.#now(), client: owner };
    this.#bytes += size;
    if (owner === null) this.#shared.set(key, entry);
    else {
      this.#single.set(key, entry);
      let mine = this.#clients.get(owner);
      if (mine === undefined) this.#clients.set(owner, (mine = { bytes: 0, keys: new Set() }));
      mine.bytes += size;
      mine.keys.add(key);
      // The client's own oldest leave first, past its share.
      for (const k of mine.keys) {
        if (mine.bytes <= share) break;
        this.#drop(k, this.#single.get(k)!);
      }
    }
    // Past the budget, answers one client asked leave before those several did, oldest first.
    for (const from of [this.#single, this.#shared])
      for (const [k, e] of from) {
        if (this.#bytes <= this.options.maxBytes) return;
        this.#drop(k, e);
      }
  }

  /**
   * The answer to serve instead of the failure `cause`, or undefined: only when the database is
   * unavailable and an answer for `key` was known current within maxAgeMs. `seen`: the data
   * version this instance read last, and when.
   */
  answer(key: string, cause: unknown, seen: VersionSeen | null): Reply | undefined {
    const entry = this.#shared.get(key) ?? this.#single.get(key);
    if (entry === undefined) return undefined;
    // The database unavailable, or too many calls already waiting for it (the bound answers at once),
    // or only a read-only server reachable (a switchover: the service keeps no connection to it).
    const condition = databaseCondition(cause);
    if (condition !== 'unavailable' && condition !== 'read-only' && errorCode(cause) !== 'ERR_DB_BUSY')
      return undefined;
    let knownAt = entry.at;
    if (entry.version !== null) {
      // The data changed after it was made (or no read tells): it may not be today's answer.
      if (seen === null || entry.version !== seen.version) return undefined;
      knownAt = Math.max(knownAt, seen.at);
    }
    if (this.#now() - knownAt > this.options.maxAgeMs) return undefined;
    this.served++;
    return entry.reply;
  }

  get bytes(): number {
    return this.#bytes;
  }

  #drop(key: string, entry: Entry): void {
    this.#bytes -= entry.bytes;
    if (entry.client === null) {
      this.#shared.delete(key);
      return;
    }
    this.#single.delete(key);
    const mine = this.#clients.get(entry.client)!;
    mine.bytes -= entry.bytes;
    mine.keys.delete(key);
    if (mine.keys.size === 0) this.#clients.delete(entry.client);
  }
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
