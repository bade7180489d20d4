/**
 * A store that opens itself in the background, retrying with back-off (open-retry.ts), so the
 * service can listen at once and say it is not ready: until the database answers, every call
 * (ping included, hence /readyz) fails with StoreNotReadyError, which operations turn into the
 * documented server fault.
 */
import { forwardMethods } from '../forward-store.js';
import type { Around } from '../forward-store.js';
import type { RetentionStore } from '../retention-types.js';
import type { ShadowStore } from '../shadow-types.js';
import type { SmsStore } from '../sms-types.js';
import { SqlRetention } from '../sql/sql-retention.js';
import { SqlShadow } from '../sql/sql-shadow.js';
import { SqlSms } from '../sql/sql-sms.js';
import { SqlStore } from '../sql/sql-store.js';
import type { ServiceStore, StudentRecord } from '../store.js';
import { openStoreWithRetry } from './open-retry.js';
import type { RetryOptions } from './open-retry.js';
import type { OpenStoreOptions } from './open-store.js';

export class StoreNotReadyError extends Error {
  readonly code = 'ERR_STORE_NOT_READY';
  constructor() {
    super('the database is not reachable yet; retrying');
    this.name = 'StoreNotReadyError';
  }
}

// Every method of the opened SqlStore not written in the class is forwarded to it (constructor).
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type -- the forwarded methods are added at construction
export interface BackgroundStore extends ServiceStore {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class BackgroundStore {
  /** Resolves with the opened store; rejects if opening gave up (an error retrying cannot cure) or was closed first. */
  readonly opened: Promise<SqlStore>;
  readonly #abort = new AbortController();
  #store: SqlStore | null = null;
  #closed: Promise<void> | null = null;

  constructor(url: string, options: OpenStoreOptions = {}, retry: Omit<RetryOptions, 'signal'> = {}) {
    this.opened = openStoreWithRetry(url, options, { ...retry, signal: this.#abort.signal }).then(
      (store) => (this.#store = store),
    );
    // Callers that only use the store's methods never look at `opened`: its failure is theirs to read, not unhandled.
    this.opened.catch(() => undefined);
    // Until the store is open, every forwarded call fails with StoreNotReadyError (as a rejected promise).
    const notReady: Around = (call) => (this.#store === null ? Promise.reject(new StoreNotReadyError()) : call());
    const forwarded = forwardMethods<Record<string, unknown>>(SqlStore.prototype, () => this.#store!, notReady);
    for (const [name, method] of Object.entries(forwarded))
      if (!(name in this)) Object.defineProperty(this, name, { value: method });
    this.retention = forwardMethods<RetentionStore>(SqlRetention.prototype, () => this.#store!.retention, notReady);
    this.sms = forwardMethods<SmsStore>(SqlSms.prototype, () => this.#store!.sms, notReady);
    this.shadow = forwardMethods<ShadowStore>(SqlShadow.prototype, () => this.#store!.shadow, notReady);
  }

  /** The opened store's SMS protection tables; until then every call fails as the others do. */
  readonly sms: SmsStore;

  /** The opened store's retention; until then every call fails as the others do. */
  readonly retention: RetentionStore;
  /** The opened store's shadow records, likewise. */
  readonly shadow: ShadowStore;

  /** True once the database has answered and the store is open. */
  get ready(): boolean {
    return this.#store !== null;
  }

  async *studentsOfSchoolPages(
    schoolBaseUrl: string,
    showActive: string,
    pageSize: number,
  ): AsyncGenerator<readonly StudentRecord[], void, undefined> {
    if (this.#store === null) throw new StoreNotReadyError();
    yield* this.#store.studentsOfSchoolPages(schoolBaseUrl, showActive, pageSize);
  }

  /** Null (nothing is kept) until the store is open. */
  dataVersion(): string | null | Promise<string | null> {
    return this.#store === null ? null : this.#store.dataVersion();
  }

  /** Stops retrying, or closes the store it opened. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#abort.abort();
      const store = await this.opened.catch(() => null);
      await store?.close();
    })();
    return this.#closed;
  }
}
