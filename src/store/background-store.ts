/**
 * A store that opens itself in the background, retrying with back-off (open-retry.ts), so the
 * service can listen at once and say it is not ready: until the database answers, every call
 * (ping included, hence /readyz) fails with StoreNotReadyError, which operations turn into the
 * documented server fault.
 */
import type { OpenStoreOptions } from './open-store.js';
import { openStoreWithRetry } from './open-retry.js';
import type { RetryOptions } from './open-retry.js';
import type { SqlStore } from './sql-store.js';
import type { OutboxMessage, OutboxOutcome, OutboxState, OutboxStore } from './outbox-types.js';
import type { RetentionStore } from './retention-types.js';
import type {
  AuthCodeOutcome,
  AuthCodeRequest,
  Dataset,
  ImportOptions,
  ImportReport,
  MarkRecord,
  PushSettingsRecord,
  Store,
  StudentRecord,
} from './store.js';

export class StoreNotReadyError extends Error {
  readonly code = 'ERR_STORE_NOT_READY';
  constructor() {
    super('the database is not reachable yet; retrying');
    this.name = 'StoreNotReadyError';
  }
}

export class BackgroundStore implements Store, OutboxStore {
  /** Resolves with the opened store; rejects if opening gave up (an error retrying cannot cure) or was closed first. */
  readonly opened: Promise<SqlStore>;
  readonly #abort = new AbortController();
  #store: SqlStore | null = null;
  #closed: Promise<void> | null = null;
  /** The opened store's retention; until then every call fails as the others do. */
  readonly retention: RetentionStore = {
    pruneBatch: (table, before, limit) => this.#call((s) => s.retention.pruneBatch(table, before, limit)),
    countPrunable: (table, before) => this.#call((s) => s.retention.countPrunable(table, before)),
    eraseDelivered: (limit) => this.#call((s) => s.retention.eraseDelivered(limit)),
    countUnerased: () => this.#call((s) => s.retention.countUnerased()),
    retentionCounts: () => this.#call((s) => s.retention.retentionCounts()),
    compactLog: () => this.#call((s) => s.retention.compactLog()),
  };

  constructor(url: string, options: OpenStoreOptions = {}, retry: Omit<RetryOptions, 'signal'> = {}) {
    this.opened = openStoreWithRetry(url, options, { ...retry, signal: this.#abort.signal }).then((store) => (this.#store = store));
    // Callers that only use the store's methods never look at `opened`: its failure is theirs to read, not unhandled.
    this.opened.catch(() => undefined);
  }

  /** True once the database has answered and the store is open. */
  get ready(): boolean {
    return this.#store !== null;
  }

  studentsOfSchool(schoolBaseUrl: string, showActive: string): Promise<readonly StudentRecord[]> {
    return this.#call((s) => s.studentsOfSchool(schoolBaseUrl, showActive));
  }

  async *studentsOfSchoolPages(schoolBaseUrl: string, showActive: string, pageSize: number): AsyncGenerator<readonly StudentRecord[], void, undefined> {
    if (this.#store === null) throw new StoreNotReadyError();
    yield* this.#store.studentsOfSchoolPages(schoolBaseUrl, showActive, pageSize);
  }

  dataVersion(): string | null {
    return this.#store === null ? null : this.#store.dataVersion();
  }

  deviceToken(id: string): Promise<string | null> {
    return this.#call((s) => s.deviceToken(id));
  }

  marksOf(studentId: string, subjectId: string | null): Promise<readonly MarkRecord[]> {
    return this.#call((s) => s.marksOf(studentId, subjectId));
  }

  pushSettings(): Promise<PushSettingsRecord | null> {
    return this.#call((s) => s.pushSettings());
  }

  acceptAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    return this.#call((s) => s.acceptAuthCode(request));
  }

  recordAuthCode(code: string | null, phone: string | null, at: Date): Promise<void> {
    return this.#call((s) => s.recordAuthCode(code, phone, at));
  }

  claimOutbox(worker: string, now: Date, leaseMs: number, limit: number): Promise<readonly OutboxMessage[]> {
    return this.#call((s) => s.claimOutbox(worker, now, leaseMs, limit));
  }

  finishOutbox(id: number, worker: string, outcome: OutboxOutcome): Promise<void> {
    return this.#call((s) => s.finishOutbox(id, worker, outcome));
  }

  listOutbox(filter: { readonly state?: OutboxState; readonly limit?: number }): Promise<readonly OutboxMessage[]> {
    return this.#call((s) => s.listOutbox(filter));
  }

  retryOutbox(ids: 'failed' | readonly number[], now: Date): Promise<number> {
    return this.#call((s) => s.retryOutbox(ids, now));
  }

  outboxCounts(): Promise<Readonly<Record<OutboxState, number>>> {
    return this.#call((s) => s.outboxCounts());
  }

  importDataset(dataset: Dataset, options?: ImportOptions): Promise<ImportReport> {
    return this.#call((s) => s.importDataset(dataset, options));
  }

  isEmpty(): Promise<boolean> {
    return this.#call((s) => s.isEmpty());
  }

  ping(): Promise<void> {
    return this.#call((s) => s.ping());
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

  async #call<T>(work: (store: SqlStore) => Promise<T>): Promise<T> {
    if (this.#store === null) throw new StoreNotReadyError();
    return work(this.#store);
  }
}
