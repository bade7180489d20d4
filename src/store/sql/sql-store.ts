/**
 * The Store over Kysely, the same code for SQLite and PostgreSQL. What differs is asked of the
 * Dialect (schema/dialect.ts) or done by the engine's parts (engine-parts.ts: reads, AuthCode's quick
 * write, snapshots, retention batches); here only the SQL both accept (INSERT ... ON CONFLICT, ORDER BY).
 */
import { CompiledQuery, sql } from 'kysely';
import type { Kysely } from 'kysely';
import { validateDataset } from '../import/dataset-check.js';
import { IMPORT_BATCH_ROWS, replaceMarks } from '../import/replace-marks.js';
import type {
  DeliveryRates,
  DeliveryReceipt,
  OutboxBacklog,
  OutboxMessage,
  OutboxOutcome,
  OutboxState,
  SentMessage,
  SentMessageKey,
} from '../outbox-types.js';
import type { Dialect } from '../schema/dialect.js';
import type { Database } from '../schema/tables.js';
import type {
  AuthCodeOutcome,
  AuthCodeRequest,
  Dataset,
  ImportOptions,
  ImportReport,
  MarkRecord,
  PushSettingsRecord,
  ServiceStore,
  StudentRecord,
} from '../store.js';
import type { DataVersionReader, DirectAuthCode, EngineParts, EngineReads, EngineSnapshots } from './engine-parts.js';
import { Slots } from './slots.js';
import { SqlAdmin } from './sql-admin.js';
import { SqlAuthCode } from './sql-auth-code.js';
import { SqlOutbox } from './sql-outbox.js';
import { SqlRetention } from './sql-retention.js';
import { SqlShadow } from './sql-shadow.js';
import { SqlSms } from './sql-sms.js';
import { StudentLists } from './student-lists.js';

export class SqlStore implements ServiceStore {
  readonly dialect: Dialect;
  /** The migration versions opening the store applied (none when the database was up to date). */
  readonly migrationsApplied: readonly number[];
  /** Counts, listings, device edits, streamed import and export: for the admin CLI. */
  readonly admin: SqlAdmin;
  /** Pruning old rows and erasing delivered texts: for the pruner and `sis prune`. */
  readonly retention: SqlRetention;
  /** AuthCode's SMS protection: refusal counts, blocked ranges, the address key (sms-types.ts). */
  readonly sms: SqlSms;
  /** What is kept of the comparisons beside the legacy service (src/shadow). */
  readonly shadow: SqlShadow;
  readonly #db: Kysely<Database>;
  readonly #lockScope: string;
  readonly #reads: EngineReads;
  readonly #snapshots: EngineSnapshots;
  readonly #slots: Slots;
  readonly #students: StudentLists;
  // Compiled once: per request only the parameters change, so the query builder stays off the hot path.
  readonly #tokenQuery: CompiledQuery;
  readonly #authCodeInsert: CompiledQuery;
  readonly #marksQuery: CompiledQuery;
  readonly #subjectMarksQuery: CompiledQuery;
  readonly #pushQuery: CompiledQuery;
  readonly #outbox: SqlOutbox;
  readonly #sharedAuthCode: SqlAuthCode;
  readonly #authCode: DirectAuthCode;
  readonly #dataVersion: DataVersionReader;
  readonly #close: () => Promise<void>;
  readonly #serverClock: () => Promise<number | null>;
  #closed: Promise<void> | null = null;

  constructor(parts: EngineParts) {
    const { db, dialect, lockScope } = parts;
    this.#db = db;
    this.#reads = parts.reads;
    this.#authCode = parts.authCode;
    this.#dataVersion = parts.dataVersion;
    this.#snapshots = parts.snapshots;
    this.#close = () => parts.close();
    this.#serverClock = () => parts.serverClock();
    this.dialect = dialect;
    this.#lockScope = lockScope;
    this.migrationsApplied = parts.migrationsApplied;
    this.admin = new SqlAdmin(db, dialect, lockScope, parts.bulkSession);
    this.retention = new SqlRetention(db, parts.retention);
    this.sms = new SqlSms(db);
    this.shadow = new SqlShadow(db, dialect, lockScope);
    this.#slots = new Slots(parts.snapshots.slots);
    this.#students = new StudentLists(db, {
      read: (query) => this.#reads.arrays(query),
      snapshot: parts.snapshots.open,
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
    this.#outbox = new SqlOutbox(db, dialect);
    this.#sharedAuthCode = new SqlAuthCode(db, dialect, lockScope);
  }

  async marksOf(studentId: string, subjectId: string | null): Promise<readonly MarkRecord[]> {
    return subjectId === null
      ? this.#reads.rows<MarkRecord>(this.#marksQuery.sql, [studentId])
      : this.#reads.rows<MarkRecord>(this.#subjectMarksQuery.sql, [studentId, subjectId]);
  }

  async pushSettings(): Promise<PushSettingsRecord | null> {
    return (await this.#reads.rows<PushSettingsRecord>(this.#pushQuery.sql, []))[0] ?? null;
  }

  acceptAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    try {
      const outcome = this.#authCode(request);
      if (outcome !== null) return Promise.resolve(outcome);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.#sharedAuthCode.acceptAuthCode(request);
  }

  claimOutbox(worker: string, now: Date, leaseMs: number, limit: number): Promise<readonly OutboxMessage[]> {
    return this.#outbox.claimOutbox(worker, now, leaseMs, limit);
  }

  finishOutbox(id: number, worker: string, outcome: OutboxOutcome): Promise<boolean> {
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

  recordReceipt(receipt: DeliveryReceipt): Promise<'recorded' | 'unknown' | 'replayed'> {
    return this.#outbox.recordReceipt(receipt);
  }

  sentMessage(key: SentMessageKey): Promise<SentMessage | null> {
    return this.#outbox.sentMessage(key);
  }

  sentByGateway(since: Date): Promise<ReadonlyMap<string, number>> {
    return this.#outbox.sentByGateway(since);
  }

  deliveryRates(since: Date, top: number): Promise<DeliveryRates> {
    return this.#outbox.deliveryRates(since, top);
  }

  outboxBacklog(): Promise<OutboxBacklog> {
    return this.#outbox.outboxBacklog();
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
    return { open: this.#slots.taken, waiting: this.#slots.waiting, connections: this.#snapshots.connections() };
  }

  /** SQLite: synchronous; PostgreSQL: one primary-key lookup (sqlite-data-version.ts, postgres-data-version.ts). */
  dataVersion(): string | null | Promise<string | null> {
    return this.#dataVersion();
  }

  deviceToken(id: string): string | null | Promise<string | null> {
    const token = this.#reads.value(this.#tokenQuery.sql, [id]);
    return token instanceof Promise ? token.then(tokenOf) : tokenOf(token);
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

  /**
   * How far this host's clock is behind the database server's (ms; negative: ahead), measured from
   * the middle of one round trip; null for a database on this host (SQLite).
   */
  async serverClockOffsetMs(): Promise<number | null> {
    const sent = Date.now();
    const server = await this.#serverClock();
    return server === null ? null : Math.round(server - (sent + Date.now()) / 2);
  }

  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }
}

/** The token column's value: a string, or null (no device, or no token stored). */
const tokenOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);
