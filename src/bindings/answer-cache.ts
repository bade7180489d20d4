import type { Reply } from '../reply/reply.js';
import type { Store } from '../store/store.js';
import { sizeOf } from './stale-answers.js';
import type { VersionSeen } from './stale-answers.js';
import type { Call } from './types.js';

/** A cacheable call's key and the data version read for it, and the answer kept for both if any. */
export interface Kept {
  readonly key: string;
  readonly version: string;
  readonly reply: Reply | undefined;
}

/**
 * Answers of `cacheable` operations (reads whose answer is a function of their arguments and the
 * stored data: GetStudentSchool), kept with the store's data version they were read at. A hit
 * is served only while the version is still the same, and the version is read before the data,
 * so an answer is never older than the request: this is not a time-to-live cache. The version is
 * the store's to tell cheaply (SQLite: `data_version` and the connection's own changes, read
 * synchronously; PostgreSQL: a counter every write to the students moves, one primary-key lookup),
 * so several instances on one PostgreSQL never serve what another instance's commit changed.
 *
 * Bounded by bytes (oldest entries leave first); an answer bigger than an eighth of the budget,
 * a streamed one, or one for arguments longer than 1 KiB is not kept. Keys are strings in a Map.
 */
export class AnswerCache {
  readonly #entries = new Map<string, { readonly version: string; readonly reply: Reply; readonly bytes: number }>();
  #bytes = 0;
  hits = 0;
  misses = 0;
  /** The data version read last and when its read began (stale-answers.ts); version null before the first. */
  readonly seen: VersionSeen = { version: null, at: 0 };

  constructor(readonly maxBytes: number) {}

  /** The key for a call in one binding (the bytes differ between bindings), or null when not worth keeping. */
  key(binding: string, call: Call): string | null {
    return answerKey(binding, call);
  }

  /**
   * The key of a call, the data version read now (before the data) and the answer kept for both.
   * A version told synchronously is looked up at once, with no promise; one read from the database
   * is awaited. Null when nothing is to be kept: arguments too long, or a store that cannot tell
   * its version now (a failure to read it included: the operation then answers, or meets it).
   */
  lookUp(binding: string, call: Call, store: Pick<Store, 'dataVersion'>): Kept | null | Promise<Kept | null> {
    const key = this.key(binding, call);
    if (key === null) return null;
    // The version read from here on was current at least now (the read begins after this).
    const at = Date.now();
    let version: ReturnType<NonNullable<Store['dataVersion']>>;
    try {
      version = store.dataVersion?.() ?? null;
    } catch {
      return null;
    }
    if (version === null) return null;
    if (typeof version === 'string') return { key, version, reply: this.get(key, version, at) };
    return Promise.resolve(version).then(
      (v) => (v === null ? null : { key, version: v, reply: this.get(key, v, at) }),
      () => null,
    );
  }

  /** The answer kept for `key` at `version`, a version read from the database (begun at `at`). */
  get(key: string, version: string, at = Date.now()): Reply | undefined {
    // The newest version read, and when: a stale answer made at it was current then, no later.
    if (at >= this.seen.at) {
      this.seen.version = version;
      this.seen.at = at;
    }
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.version !== version) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: the Map's order is the eviction order.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.reply;
  }

  set(key: string, version: string, reply: Reply): void {
    const bytes = sizeOf(reply);
    if (bytes === null || bytes > this.maxBytes / 8) return;
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#entries.delete(key);
      this.#bytes -= old.bytes;
    }
    this.#entries.set(key, { version, reply, bytes });
    this.#bytes += bytes;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= e.bytes;
    }
  }

  get bytes(): number {
    return this.#bytes;
  }
}

/**
 * A call's key in one binding (the bytes differ between bindings), or null for arguments over
 * 1 KiB: not worth keeping.
 */
export function answerKey(binding: string, call: Call): string | null {
  let key = `${binding}\u0000${call.op.name}`;
  for (const p of call.op.params) {
    const v = call.args[p.name];
    // Each value with its length: no two argument lists make one key, whatever characters they hold.
    const text = v === null || v === undefined ? null : String(v);
    key += text === null ? '\u0000~' : `\u0000${text.length}:${text}`;
  }
  return key.length > 1024 ? null : key;
}
