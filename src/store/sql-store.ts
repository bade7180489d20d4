/**
 * The Store over Kysely, the same code for SQLite and PostgreSQL. Dialect differences live in
 * dialect/ (asked through options.dialect, or given by the opener: snapshots, retention batches,
 * direct SQLite reads); here only the SQL both accept (INSERT ... ON CONFLICT, ORDER BY).
 */
import { CompiledQuery, sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { DataVersionReader } from './data-version.js';
import { validateDataset } from './dataset.js';
import { isConnectionLost } from './db-errors.js';
import type { OutboxMessage, OutboxOutcome, OutboxState, OutboxStore } from './outbox-types.js';
import type { WithBulkSession } from './bulk-session.js';
import { SqlAdmin } from './sql-admin.js';
import { SqlOutbox } from './sql-outbox.js';
import type { DirectAuthCode } from './sqlite-auth-code.js';
import { SqlRetention } from './sql-retention.js';
import { SqlShadow } from './sql-shadow.js';
import type { Dialect } from './dialect/dialect.js';
import type { RetentionBatches } from './retention-types.js';
import type { Database } from './schema.js';
import { Slots } from './slots.js';
import type { SnapshotRead } from './snapshot-read.js';
import { IMPORT_BATCH_ROWS, replaceMarks } from './replace-marks.js';
import type { SqliteReaders } from './sqlite-readers.js';
import { StudentLists } from './student-lists.js';
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

export interface SqlStoreOptions {
  readonly dialect: Dialect;
  /**
   * SQLite only: runs a read synchronously on the one connection, bypassing Kysely's connection
   * queue. Reads then see the connection's own uncommitted writes; the service writes students and
   * devices only through imports, which run in another process (or before it listens).
   */
  readonly directRead?: (sql: string, parameters: readonly unknown[], arrays?: boolean) => unknown[];
  /** How the store tells its data version (data-version.ts); without it, it tells none. */
  readonly dataVersion?: DataVersionReader;
  /** SQLite only: AuthCode's transaction run synchronously (see sqlite-auth-code.ts). */
  readonly directAuthCode?: DirectAuthCode;
  /** How retention's batches run (the dialect's: sqlite-retention.ts, dialect/postgres-retention.ts). */
  readonly retention: RetentionBatches;
  /** Opens a read of one consistent state on a connection of its own (snapshot-read.ts); none where there is none (SQLite :memory:). */
  readonly snapshot?: () => Promise<SnapshotRead>;
  /** SQLite on a file: the read-only connections that serve snapshot reads (closed with the store). */
  readonly readers?: SqliteReaders;
  /** Most snapshot reads (streamed lists) open at once; more wait their turn (default 4). */
  readonly snapshotSlots?: number;
  /** Keys the PostgreSQL advisory locks, so isolated schemas do not wait on each other. */
  readonly lockScope: string;
  /** The migrations applied when the store was opened. */
  readonly migrationsApplied?: readonly number[];
  /** The session bulk imports run on (PostgreSQL: a pool client of their own, with COPY; default: a Kysely connection). */
  readonly bulkSession?: WithBulkSession;
}

export class SqlStore implements Store, OutboxStore {
  readonly dialect: Dialect;
  /** The migration versions opening the store applied (none when the database was up to date). */
  readonly migrationsApplied: readonly number[];
  /** Counts, listings, device edits, streamed import and export: for the admin CLI. */
  readonly admin: SqlAdmin;
  /** Pruning old rows and erasing delivered texts: for the pruner and `sis prune`. */
  readonly retention: SqlRetention;
  /** What is kept of the comparisons beside the legacy service (src/shadow). */
  readonly shadow: SqlShadow;
  readonly #db: Kysely<Database>;
  readonly #lockScope: string;
  // Compiled once: per request only the parameters change, so the query builder stays off the hot path.
  readonly #directRead: SqlStoreOptions['directRead'];
  readonly #readers: SqliteReaders | undefined;
  readonly #slots: Slots;
  readonly #students: StudentLists;
  readonly #tokenQuery: CompiledQuery;
  readonly #authCodeInsert: CompiledQuery;
  readonly #marksQuery: CompiledQuery;
  readonly #subjectMarksQuery: CompiledQuery;
  readonly #pushQuery: CompiledQuery;
  readonly #outbox: SqlOutbox;
  readonly #directAuthCode: DirectAuthCode | undefined;
  readonly #dataVersion: DataVersionReader | undefined;
  #closed: Promise<void> | null = null;

  constructor(db: Kysely<Database>, options: SqlStoreOptions) {
    this.#db = db;
    this.#directRead = options.directRead;
    this.#directAuthCode = options.directAuthCode;
    this.#dataVersion = options.dataVersion;
    this.dialect = options.dialect;
    this.#lockScope = options.lockScope;
    this.migrationsApplied = options.migrationsApplied ?? [];
    this.admin = new SqlAdmin(db, options.dialect, options.lockScope, options.bulkSession);
    this.retention = new SqlRetention(db, options.retention);
    this.shadow = new SqlShadow(db, options.dialect, options.lockScope);
    this.#readers = options.readers;
    this.#slots = new Slots(options.snapshotSlots ?? 4);
    this.#students = new StudentLists(db, {
      read: (query) => this.#readArrays(query),
      snapshot: options.snapshot ?? null,
      slots: this.#slots,
    });
    this.#tokenQuery = db.selectFrom('devices').select('token').where('id', '=', '').compile();
    this.#authCodeInsert = db.insertInto('auth_codes').values({ code: '', phone: '', created_at: '' }).compile();
    const marks = db
      .selectFrom('marks')
      .select(['id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note'])
      .where('id_student', '=', '');
    this.#marksQuery = marks.orderBy('seq').compile();
    this.#subjectMarksQuery = marks.where('SubjectID', '=', '').orderBy('seq').compile();
    this.#pushQuery = db.selectFrom('push_settings').select(['ServerKey', 'SenderId']).compile();
    this.#outbox = new SqlOutbox(db, options.dialect, options.lockScope);
  }

  async marksOf(studentId: string, subjectId: string | null): Promise<readonly MarkRecord[]> {
    return subjectId === null
      ? this.#read<MarkRecord>(this.#marksQuery.sql, [studentId])
      : this.#read<MarkRecord>(this.#subjectMarksQuery.sql, [studentId, subjectId]);
  }

  async pushSettings(): Promise<PushSettingsRecord | null> {
    return (await this.#read<PushSettingsRecord>(this.#pushQuery.sql, []))[0] ?? null;
  }

  acceptAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    if (this.#directAuthCode !== undefined) {
      try {
        const outcome = this.#directAuthCode(request);
        if (outcome !== null) return Promise.resolve(outcome);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return this.#outbox.acceptAuthCode(request);
  }

  checkAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    return this.#outbox.checkAuthCode(request);
  }

  claimOutbox(worker: string, now: Date, leaseMs: number, limit: number): Promise<readonly OutboxMessage[]> {
    return this.#outbox.claimOutbox(worker, now, leaseMs, limit);
  }

  finishOutbox(id: number, worker: string, outcome: OutboxOutcome): Promise<void> {
    return this.#outbox.finishOutbox(id, worker, outcome);
  }

  listOutbox(filter: { readonly state?: OutboxState; readonly limit?: number }): Promise<readonly OutboxMessage[]> {
    return this.#outbox.listOutbox(filter);
  }

  retryOutbox(ids: 'failed' | readonly number[], now: Date): Promise<number> {
    return this.#outbox.retryOutbox(ids, now);
  }

  outboxCounts(): Promise<Readonly<Record<OutboxState, number>>> {
    return this.#outbox.outboxCounts();
  }

  studentsOfSchool(schoolBaseUrl: string, showActive: string): Promise<readonly StudentRecord[]> {
    return this.#students.all(schoolBaseUrl, showActive);
  }

  studentsOfSchoolPages(
    schoolBaseUrl: string,
    showActive: string,
    pageSize: number,
  ): AsyncIterable<readonly StudentRecord[]> {
    return this.#students.pages(schoolBaseUrl, showActive, pageSize);
  }

  /** Snapshot reads in progress and waiting, and the SQLite reader connections open (for tests and checks). */
  snapshotReads(): { readonly open: number; readonly waiting: number; readonly connections: number } {
    return { open: this.#slots.taken, waiting: this.#slots.waiting, connections: this.#readers?.open ?? 0 };
  }

  /** SQLite: synchronous; PostgreSQL: one primary-key lookup (see data-version.ts). */
  dataVersion(): string | null | Promise<string | null> {
    return this.#dataVersion === undefined ? null : this.#dataVersion();
  }

  async deviceToken(id: string): Promise<string | null> {
    const row = (await this.#read<{ token: string | null }>(this.#tokenQuery.sql, [id]))[0];
    return row === undefined ? null : row.token;
  }

  /**
   * A read, tried once more on another connection when its connection turns out to have died
   * (the pool drops it): a restarted server or a killed connection then costs no failed request.
   * Writes are not retried: whether a lost one was committed cannot be known.
   */
  #read<R>(source: string, parameters: readonly unknown[]): Promise<R[]> {
    if (this.#directRead !== undefined) {
      // Synchronous on SQLite: no query object, no driver queue, one resolved promise.
      try {
        return Promise.resolve(this.#directRead(source, parameters) as R[]);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return this.#pooledRead<R>(CompiledQuery.raw(source, [...parameters]));
  }

  async #pooledRead<R>(query: CompiledQuery): Promise<R[]> {
    try {
      return (await this.#db.executeQuery<R>(query)).rows;
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      return (await this.#db.executeQuery<R>(query)).rows;
    }
  }

  /** A read with its rows as arrays in column order (SQLite builds those faster than objects). */
  async #readArrays(query: CompiledQuery): Promise<ReadonlyArray<readonly unknown[]>> {
    if (this.#directRead !== undefined) return this.#directRead(query.sql, query.parameters, true) as unknown[][];
    const rows = await this.#pooledRead<Record<string, unknown>>(query);
    return rows.map((row) => Object.values(row));
  }

  async recordAuthCode(code: string | null, phone: string | null, at: Date): Promise<void> {
    await this.#db.executeQuery(CompiledQuery.raw(this.#authCodeInsert.sql, [code, phone, at.toISOString()]));
  }

  async importDataset(dataset: Dataset, options: ImportOptions = {}): Promise<ImportReport> {
    // Validated here too, whoever the caller: this is where data enters the store (and '' stays '').
    const clean = validateDataset(dataset);
    const { students = [], devices = [], marks = [], push } = clean;
    return this.dialect.writeTransaction(this.#db, async (trx) => {
      await this.dialect.lockForWrite(trx, 'import', this.#lockScope);
      if (options.replace === true) {
        // As `sis import --replace` of a JSON file: marks and push only when the dataset has them.
        await trx.deleteFrom('students').execute();
        await trx.deleteFrom('devices').execute();
        if (clean.marks !== undefined) await trx.deleteFrom('marks').execute();
        if (clean.push !== undefined) await trx.deleteFrom('push_settings').execute();
      }
      const top = await trx
        .selectFrom('students')
        .select(sql<number | string | bigint | null>`max(seq)`.as('top'))
        .executeTakeFirst();
      // New rows go after everything stored; rows already stored keep their seq (not in the update set).
      const base = Number(top?.top ?? 0) + 1;
      for (let start = 0; start < students.length; start += IMPORT_BATCH_ROWS) {
        // The records are validateDataset's clean copies: exactly the table's fields.
        const rows = students.slice(start, start + IMPORT_BATCH_ROWS).map((s, i) => ({ ...s, seq: base + start + i }));
        await trx
          .insertInto('students')
          .values(rows)
          .onConflict((oc) =>
            oc.column('id_student').doUpdateSet((eb) => ({
              fullName: eb.ref('excluded.fullName'),
              id_device: eb.ref('excluded.id_device'),
              ShowActive: eb.ref('excluded.ShowActive'),
              school_base_url: eb.ref('excluded.school_base_url'),
            })),
          )
          .execute();
      }
      for (let start = 0; start < devices.length; start += IMPORT_BATCH_ROWS) {
        const rows = devices.slice(start, start + IMPORT_BATCH_ROWS).map((d) => ({ id: d.id, token: d.token }));
        await trx
          .insertInto('devices')
          .values(rows)
          .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ token: eb.ref('excluded.token') })))
          .execute();
      }
      if (marks.length > 0) await replaceMarks(trx, marks);
      if (push !== undefined) {
        await trx.deleteFrom('push_settings').execute();
        await trx
          .insertInto('push_settings')
          .values({ id: 1, ServerKey: push.ServerKey, SenderId: push.SenderId })
          .execute();
      }
      return {
        students: students.length,
        devices: devices.length,
        marks: marks.length,
        push: push === undefined ? 0 : 1,
      };
    });
  }

  async isEmpty(): Promise<boolean> {
    const student = await this.#db
      .selectFrom('students')
      .select(sql<number>`1`.as('one'))
      .limit(1)
      .executeTakeFirst();
    if (student !== undefined) return false;
    const device = await this.#db
      .selectFrom('devices')
      .select(sql<number>`1`.as('one'))
      .limit(1)
      .executeTakeFirst();
    return device === undefined;
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.#db);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#readers?.close();
      await this.#db.destroy();
    })();
    return this.#closed;
  }
}
