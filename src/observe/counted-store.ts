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
} from '../store/store.js';

/**
 * A Store that counts its calls in progress, for the `sis_db_calls_in_flight` gauge: the store
 * does not expose its pool, and calls in progress are what the pool is busy with.
 */
export class CountedStore implements Store {
  inFlight = 0;

  constructor(private readonly inner: Store) {}

  // Not an async function: the answer's promise is handed back as it is, with no extra hop.
  private count<T>(call: () => Promise<T>): Promise<T> {
    this.inFlight++;
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (error) {
      this.inFlight--;
      return Promise.reject(error as Error);
    }
    pending.then(this.#done, this.#done);
    return pending;
  }

  readonly #done = (): void => {
    this.inFlight--;
  };

  studentsOfSchool(schoolBaseUrl: string, showActive: string): Promise<readonly StudentRecord[]> {
    return this.count(() => this.inner.studentsOfSchool(schoolBaseUrl, showActive));
  }

  studentsOfSchoolPages(schoolBaseUrl: string, showActive: string, pageSize: number): AsyncIterable<readonly StudentRecord[]> {
    return this.inner.studentsOfSchoolPages(schoolBaseUrl, showActive, pageSize);
  }

  deviceToken(id: string): Promise<string | null> {
    return this.count(() => this.inner.deviceToken(id));
  }

  marksOf(studentId: string, subjectId: string | null): Promise<readonly MarkRecord[]> {
    return this.count(() => this.inner.marksOf(studentId, subjectId));
  }

  pushSettings(): Promise<PushSettingsRecord | null> {
    return this.count(() => this.inner.pushSettings());
  }

  acceptAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    return this.count(() => this.inner.acceptAuthCode(request));
  }

  recordAuthCode(code: string | null, phone: string | null, at: Date): Promise<void> {
    return this.count(() => this.inner.recordAuthCode(code, phone, at));
  }

  importDataset(dataset: Dataset, options?: ImportOptions): Promise<ImportReport> {
    return this.count(() => this.inner.importDataset(dataset, options));
  }

  /** A synchronous version (SQLite) is handed back as it is; a lookup (PostgreSQL) is a call in flight. */
  dataVersion(): string | null | Promise<string | null> {
    const version = this.inner.dataVersion?.() ?? null;
    if (version === null || typeof version === 'string') return version;
    this.inFlight++;
    version.then(this.#done, this.#done);
    return version;
  }

  isEmpty(): Promise<boolean> {
    return this.inner.isEmpty();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
