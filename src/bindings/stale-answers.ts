import { isStreamed } from '../reply/reply.js';
import type { Reply } from '../reply/reply.js';
import { databaseCondition } from '../store/db-errors.js';

/** How stale answers are kept and told fresh enough. */
export interface StaleOptions {
  /** The longest an answer is served after it was last known current (SIS_STALE_IF_ERROR_MS). */
  readonly maxAgeMs: number;
  /** Bytes of answers kept (SIS_STALE_ANSWERS_BYTES); most recently made kept first. */
  readonly maxBytes: number;
  /** Since when the database has not answered (ms since the epoch), null while it answers. */
  readonly databaseDownSince: () => number | null;
  readonly now?: () => number;
}

interface Entry {
  readonly reply: Reply;
  readonly bytes: number;
  /** The data version the answer was read at (cacheable operations with the answer cache on), else null. */
  readonly version: string | null;
  /** When it was made. */
  readonly at: number;
}

/**
 * The last answer of each read (an operation without `writes`) this instance made, served when the
 * database does not answer, as HTTP caches do with `stale-if-error` (RFC 5861): a blip of the
 * database every instance shares should not turn away a reader whose answer cannot have changed,
 * since every change goes through that database. Written only when an answer is made, read only
 * when a call failed because the database is unavailable (not for a refused argument, a full disk
 * or a read-only database): while the database answers nothing here is ever served, so the first
 * change after it comes back is seen as before.
 *
 * An answer is served while it was known current at most `maxAgeMs` ago: one made with a data
 * version (the answer cache's) is current as long as that version is the last this instance read,
 * that is until the database stopped answering; any other since it was made (each request made it
 * again). Bounded by bytes, the most recently made kept; an answer over an eighth of the budget,
 * or a streamed one, is not kept. Keys are the answer cache's (binding, operation, arguments).
 */
export class StaleAnswers {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  #bytes = 0;
  /** Answers served from here (sis_answers_stale_total). */
  served = 0;

  constructor(private readonly options: StaleOptions) {
    this.#now = options.now ?? Date.now;
  }

  /** Keeps the answer just made for `key` (replacing the one before). */
  keep(key: string, reply: Reply, version: string | null): void {
    const bytes = sizeOf(reply);
    if (bytes === null) return;
    const size = bytes + key.length * 2;
    if (size > this.options.maxBytes / 8) return;
    const old = this.#entries.get(key);
    if (old !== undefined) {
      // Most recently made last: the Map's order is the eviction order.
      this.#entries.delete(key);
      this.#bytes -= old.bytes;
    }
    this.#entries.set(key, { reply, bytes: size, version, at: this.#now() });
    this.#bytes += size;
    if (this.#bytes <= this.options.maxBytes) return;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.options.maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= e.bytes;
    }
  }

  /**
   * The answer to serve instead of the failure `cause`, or undefined: only when the database is
   * unavailable and an answer for `key` was known current within maxAgeMs. `lastVersion` is the
   * last data version this instance read (the answer cache's), null when none is read.
   */
  answer(key: string, cause: unknown, lastVersion: string | null): Reply | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || databaseCondition(cause) !== 'unavailable') return undefined;
    const now = this.#now();
    let knownAt: number;
    if (entry.version === null) knownAt = entry.at;
    else if (entry.version === lastVersion) knownAt = this.options.databaseDownSince() ?? now;
    else return undefined; // the data changed after it was made: it may not be today's answer
    if (now - knownAt > this.options.maxAgeMs) return undefined;
    this.served++;
    return entry.reply;
  }

  get bytes(): number {
    return this.#bytes;
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
