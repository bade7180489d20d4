/**
 * The Store over Kysely, the same code for SQLite and PostgreSQL. Dialect differences live in
 * migrations.ts and transaction.ts; here only the SQL both accept (INSERT ... ON CONFLICT, ORDER BY).
 */
import { CompiledQuery, sql } from 'kysely';
import type { Kysely, QueryResult } from 'kysely';
import { validateDataset } from './dataset.js';
import { isConnectionLost } from './db-errors.js';
import { SqlAdmin } from './sql-admin.js';
import type { Database, DialectName } from './schema.js';
import type { Dataset, ImportOptions, ImportReport, Store, StudentRecord } from './store.js';
import { lockForWrite, writeTransaction } from './transaction.js';

/** Rows per INSERT: 500 × 6 parameters stays far below SQLite's and PostgreSQL's parameter limits. */
export const IMPORT_BATCH_ROWS = 500;

export interface SqlStoreOptions {
  readonly dialect: DialectName;
  /** Keys the PostgreSQL advisory locks, so isolated schemas do not wait on each other. */
  readonly lockScope: string;
  /** The migrations applied when the store was opened. */
  readonly migrationsApplied?: readonly number[];
}

export class SqlStore implements Store {
  readonly dialect: DialectName;
  /** The migration versions opening the store applied (none when the database was up to date). */
  readonly migrationsApplied: readonly number[];
  /** Counts, listings, device edits, streamed import and export: for the admin CLI. */
  readonly admin: SqlAdmin;
  readonly #db: Kysely<Database>;
  readonly #lockScope: string;
  // Compiled once: per request only the parameters change, so the query builder stays off the hot path.
  readonly #studentsQuery: CompiledQuery;
  readonly #tokenQuery: CompiledQuery;
  readonly #authCodeInsert: CompiledQuery;
  #closed: Promise<void> | null = null;

  constructor(db: Kysely<Database>, options: SqlStoreOptions) {
    this.#db = db;
    this.dialect = options.dialect;
    this.#lockScope = options.lockScope;
    this.migrationsApplied = options.migrationsApplied ?? [];
    this.admin = new SqlAdmin(db, options.dialect, options.lockScope);
    this.#studentsQuery = db
      .selectFrom('students')
      .select(['id_student', 'fullName', 'id_device', 'ShowActive', 'school_base_url'])
      .where('school_base_url', '=', '')
      .where('ShowActive', '=', '')
      .orderBy('seq')
      .compile();
    this.#tokenQuery = db.selectFrom('devices').select('token').where('id', '=', '').compile();
    this.#authCodeInsert = db.insertInto('auth_codes').values({ code: '', phone: '', created_at: '' }).compile();
  }

  async studentsOfSchool(schoolBaseUrl: string, showActive: string): Promise<readonly StudentRecord[]> {
    const result = await this.#read<StudentRecord>(CompiledQuery.raw(this.#studentsQuery.sql, [schoolBaseUrl, showActive]));
    return result.rows;
  }

  async deviceToken(id: string): Promise<string | null> {
    const result = await this.#read<{ token: string | null }>(CompiledQuery.raw(this.#tokenQuery.sql, [id]));
    const row = result.rows[0];
    return row === undefined ? null : row.token;
  }

  /**
   * A read, tried once more on another connection when its connection turns out to have died
   * (the pool drops it): a restarted server or a killed connection then costs no failed request.
   * Writes are not retried: whether a lost one was committed cannot be known.
   */
  async #read<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.#db.executeQuery<R>(query);
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      return this.#db.executeQuery<R>(query);
    }
  }

  async recordAuthCode(code: string | null, phone: string | null, at: Date): Promise<void> {
    await this.#db.executeQuery(CompiledQuery.raw(this.#authCodeInsert.sql, [code, phone, at.toISOString()]));
  }

  async importDataset(dataset: Dataset, options: ImportOptions = {}): Promise<ImportReport> {
    // Validated here too, whoever the caller: this is where data enters the store (and '' stays '').
    const { students = [], devices = [] } = validateDataset(dataset);
    return writeTransaction(this.#db, this.dialect, async (trx) => {
      await lockForWrite(trx, this.dialect, 'import', this.#lockScope);
      if (options.replace === true) {
        await trx.deleteFrom('students').execute();
        await trx.deleteFrom('devices').execute();
      }
      const top = await trx
        .selectFrom('students')
        .select(sql<number | string | bigint | null>`max(seq)`.as('top'))
        .executeTakeFirst();
      // New rows go after everything stored; rows already stored keep their seq (not in the update set).
      const base = Number(top?.top ?? 0) + 1;
      for (let start = 0; start < students.length; start += IMPORT_BATCH_ROWS) {
        const rows = students.slice(start, start + IMPORT_BATCH_ROWS).map((s, i) => ({
          id_student: s.id_student,
          fullName: s.fullName,
          id_device: s.id_device,
          ShowActive: s.ShowActive,
          school_base_url: s.school_base_url,
          seq: base + start + i,
        }));
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
      return { students: students.length, devices: devices.length };
    });
  }

  async isEmpty(): Promise<boolean> {
    const student = await this.#db.selectFrom('students').select(sql<number>`1`.as('one')).limit(1).executeTakeFirst();
    if (student !== undefined) return false;
    const device = await this.#db.selectFrom('devices').select(sql<number>`1`.as('one')).limit(1).executeTakeFirst();
    return device === undefined;
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.#db);
  }

  close(): Promise<void> {
    this.#closed ??= this.#db.destroy();
    return this.#closed;
  }
}
