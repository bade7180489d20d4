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

/** Told how each call ended: the database's state is watched through them (database-watch.ts). */
export interface StoreObserver {
  succeeded(write: boolean): void;
  failed(error: unknown): void;
}

/**
 * A Store that counts its calls in progress, for the `sis_db_calls_in_flight` gauge: the store
 * does not expose its pool, and calls in progress are what the pool is busy with.
 */
export class CountedStore implements Store {
  inFlight = 0;

  constructor(
    private readonly inner: Store,
    private readonly observer: StoreObserver | null = null,
  ) {}

  // Not an async function: the answer's promise is handed back as it is, with no extra hop.
  private count<T>(call: () => Promise<T>, write = false): Promise<T> {
    this.inFlight++;
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (error) {
      this.#failed(error);
      return Promise.reject(error as Error);
    }
    pending.then(write ? this.#wrote : this.#read, this.#failed);
    return pending;
  }

  readonly #read = (): void => {
    this.inFlight--;
    this.observer?.succeeded(false);
  };

  readonly #wrote = (): void => {
    this.inFlight--;
    this.observer?.succeeded(true);
  };

  readonly #failed = (error: unknown): void => {
    this.inFlight--;
    this.observer?.failed(error);
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
    return this.count(() => this.inner.acceptAuthCode(request), true);
  }

  recordAuthCode(code: string | null, phone: string | null, at: Date): Promise<void> {
    return this.count(() => this.inner.recordAuthCode(code, phone, at), true);
  }

  importDataset(dataset: Dataset, options?: ImportOptions): Promise<ImportReport> {
    return this.count(() => this.inner.importDataset(dataset, options), true);
  }

  dataVersion(): string | null {
    return this.inner.dataVersion?.() ?? null;
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
