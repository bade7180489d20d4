/**
 * What the admin tools need beyond the service's queries: counts, listings, single-device edits,
 * and streamed exports. Listings walk an index page by page (keyset on seq or id), so a million rows
 * are never in memory at once; an export reads one consistent snapshot.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { bulkImport } from '../import/bulk-import.js';
import type { BulkImportOptions, BulkImportReport } from '../import/bulk-import.js';
import type { WithBulkSession } from '../import/bulk-session.js';
import { DatasetError } from '../import/dataset-check.js';
import type { ImportSource } from '../import/import-items.js';
import { findXmlForbiddenCharacter } from '../import/record-check.js';
import type { TableName, TableRecord } from '../import/record-check.js';
import type { Dialect } from '../schema/dialect.js';
import { LATEST_SCHEMA_VERSION } from '../schema/migration-list.js';
import type { Database } from '../schema/tables.js';
import { pinnedTransaction } from '../schema/transaction.js';
import type { DeviceRecord, StudentRecord } from '../store.js';

export interface StoreStats {
  readonly students: number;
  readonly devices: number;
  readonly authCodes: number;
  /** Distinct school URLs among the students (a null one is not a school). */
  readonly schools: number;
  readonly schemaVersion: number;
}

export interface SchoolSummary {
  readonly school: string | null;
  readonly students: number;
  /** Students whose ShowActive is "1". */
  readonly active: number;
}

/** What an export calls: at the start of each table, then with each page of its rows. */
export interface ExportVisitor {
  table?(table: TableName): Promise<void>;
  rows<T extends TableName>(table: T, rows: readonly TableRecord[T][]): Promise<void>;
}

/** Rows per page of a listing or an export. */
export const PAGE_ROWS = 5000;

export class SqlAdmin {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly lockScope: string,
    /** The session bulk imports run on (PostgreSQL: a pool client with COPY). */
    private readonly bulkSession: WithBulkSession,
  ) {}

  async stats(): Promise<StoreStats> {
    const count = async (table: 'students' | 'devices' | 'auth_codes'): Promise<number> => {
      const row = await this.db
        .selectFrom(table)
        .select(sql<string | number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    const schools = await this.db
      .selectFrom('students')
      .select(sql<string | number>`count(distinct school_base_url)`.as('n'))
      .executeTakeFirstOrThrow();
    const version = await this.db
      .selectFrom('sis_migrations')
      .select(sql<number | null>`max(version)`.as('v'))
      .executeTakeFirst();
    return {
      students: await count('students'),
      devices: await count('devices'),
      authCodes: await count('auth_codes'),
      schools: Number(schools.n),
      schemaVersion: Number(version?.v ?? LATEST_SCHEMA_VERSION),
    };
  }

  /** Every school URL with its number of students, in byte order of the URL (a null URL first). */
  async schools(): Promise<SchoolSummary[]> {
    const result = await sql<{ school: string | null; students: string | number; active: string | number }>`
      select school_base_url as school, count(*) as students, sum(case when "ShowActive" = '1' then 1 else 0 end) as active
      from students group by school_base_url order by school_base_url ${this.bytewise()} nulls first`.execute(this.db);
    return result.rows.map((r) => ({ school: r.school, students: Number(r.students), active: Number(r.active) }));
  }

  /** Calls `visit` with each page of a school's students (all, or those whose ShowActive equals `showActive`), in service order. */
  async forEachStudentOfSchool(
    school: string,
    showActive: string | null,
    visit: (rows: readonly StudentRecord[]) => Promise<void>,
  ): Promise<number> {
    let total = 0;
    let after = -1;
    for (;;) {
      let q = this.db
        .selectFrom('students')
        .select(['id_student', 'fullName', 'id_device', 'ShowActive', 'school_base_url', 'seq'])
        .where('school_base_url', '=', school)
        .where('seq', '>', after);
      if (showActive !== null) q = q.where('ShowActive', '=', showActive);
      const rows = await q.orderBy('seq').limit(PAGE_ROWS).execute();
      if (rows.length === 0) return total;
      total += rows.length;
      after = Number(rows.at(-1)!.seq);
      await visit(rows.map(stripSeq));
      if (rows.length < PAGE_ROWS) return total;
    }
  }

  /** The device, or null when there is none (its token may be null). */
  async device(id: string): Promise<DeviceRecord | null> {
    return (
      (await this.db.selectFrom('devices').select(['id', 'token']).where('id', '=', id).executeTakeFirst()) ?? null
    );
  }

  async setDevice(id: string, token: string | null): Promise<'created' | 'updated'> {
    const problems = [checkText('id', id), token === null ? null : checkText('token', token)].filter(
      (p): p is string => p !== null,
    );
    if (problems.length > 0) throw new DatasetError(problems, problems.length, 'device');
    return this.dialect.writeTransaction(this.db, async (trx) => {
      const existing = await trx.selectFrom('devices').select('id').where('id', '=', id).executeTakeFirst();
      await trx
        .insertInto('devices')
        .values({ id, token })
        .onConflict((oc) => oc.column('id').doUpdateSet({ token }))
        .execute();
      return existing === undefined ? 'created' : 'updated';
    });
  }

  /** True when there was such a device. */
  async removeDevice(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('devices').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * Reads `tables` from one snapshot, page by page: students in service order (first import
   * first), devices in byte order of their id, marks in import order, then the push settings
   * (no row when none are stored). Returns the number of rows of each table.
   */
  async export(tables: readonly TableName[], visitor: ExportVisitor): Promise<Record<TableName, number>> {
    const counts: Record<TableName, number> = { students: 0, devices: 0, marks: 0, push: 0 };
    const visit = visitor.rows;
    await this.db.connection().execute((conn) =>
      pinnedTransaction(conn, this.dialect, 'snapshot', async () => {
        if (tables.includes('students')) {
          await visitor.table?.('students');
          let after = -1;
          for (;;) {
            const rows = await conn
              .selectFrom('students')
              .select(['id_student', 'fullName', 'id_device', 'ShowActive', 'school_base_url', 'seq'])
              .where('seq', '>', after)
              .orderBy('seq')
              .limit(PAGE_ROWS)
              .execute();
            if (rows.length === 0) break;
            counts.students += rows.length;
            after = Number(rows.at(-1)!.seq);
            await visit('students', rows.map(stripSeq));
            if (rows.length < PAGE_ROWS) break;
          }
        }
        if (tables.includes('devices')) {
          await visitor.table?.('devices');
          let after: string | null = null;
          for (;;) {
            const key = sql`id ${this.bytewise()}`;
            const rows: DeviceRecord[] = await conn
              .selectFrom('devices')
              .select(['id', 'token'])
              .$if(after !== null, (q) => q.where(sql<boolean>`${key} > ${after}`))
              .orderBy(key)
              .limit(PAGE_ROWS)
              .execute();
            if (rows.length === 0) break;
            counts.devices += rows.length;
            after = rows.at(-1)!.id;
            await visit('devices', rows);
            if (rows.length < PAGE_ROWS) break;
          }
        }
        if (tables.includes('marks')) {
          await visitor.table?.('marks');
          let after = -1;
          for (;;) {
            const rows = await conn
              .selectFrom('marks')
              .select(['id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note', 'seq'])
              .where('seq', '>', after)
              .orderBy('seq')
              .limit(PAGE_ROWS)
              .execute();
            if (rows.length === 0) break;
            counts.marks += rows.length;
            after = Number(rows.at(-1)!.seq);
            await visit(
              'marks',
              rows.map((r) => ({
                id_student: r.id_student,
                SubjectID: r.SubjectID,
                SubjectName: r.SubjectName,
                Mark: r.Mark,
                Term: r.Term,
                MarkDate: r.MarkDate,
                Note: r.Note,
              })),
            );
            if (rows.length < PAGE_ROWS) break;
          }
        }
        if (tables.includes('push')) {
          await visitor.table?.('push');
          const row = await conn.selectFrom('push_settings').select(['ServerKey', 'SenderId']).executeTakeFirst();
          if (row !== undefined) {
            counts.push = 1;
            await visit('push', [row]);
          }
        }
      }),
    );
    return counts;
  }

  /** A streamed, validated, all-or-nothing import (see bulk-import.ts). */
  importStream(source: ImportSource, options: BulkImportOptions = {}): Promise<BulkImportReport> {
    return bulkImport(this.bulkSession, this.lockScope, source, options);
  }

  /** Byte order, as SQLite compares text, whatever the database's collation (an index of migration 2 serves it). */
  private bytewise(): ReturnType<typeof sql.raw> {
    return sql.raw(this.dialect.byteOrder);
  }
}

function stripSeq(row: StudentRecord & { seq: number }): StudentRecord {
  return {
    id_student: row.id_student,
    fullName: row.fullName,
    id_device: row.id_device,
    ShowActive: row.ShowActive,
    school_base_url: row.school_base_url,
  };
}

function checkText(field: string, value: string): string | null {
  const bad = findXmlForbiddenCharacter(value);
  return bad === null ? null : `${field}: contains ${bad}, a character XML 1.0 does not allow`;
}
