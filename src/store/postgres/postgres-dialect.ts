/**
 * PostgreSQL's differences (schema/dialect.ts says why each exists): a server shared by several
 * instances, so writers take advisory locks and claims skip locked rows; text compared by
 * collation unless told otherwise. Opening a pool is postgres-open.ts.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Dialect } from '../schema/dialect.js';
import type { Database } from '../schema/tables.js';

/** First half of the two-key advisory lock: "SIS" plus 1, unlikely to collide with other applications. */
const LOCK_CLASS = 0x53495301;

export const postgres: Dialect = {
  name: 'postgres',
  isServer: true,
  pooled: true,
  statementTimeoutLimitsRuns: true,
  ddl: {
    bigint: 'bigint',
    timestamp: 'timestamptz',
    generatedKey: (column) => column.primaryKey().generatedAlwaysAsIdentity(),
    async createSchema(trx, schema) {
      if (schema !== null) await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
    },
    async createByteOrderIndex(db, index, table, column) {
      // The names are the migration's own, written in its code.
      await sql`create index ${sql.raw(index)} on ${sql.raw(table)} (${sql.raw(column)} collate "C")`.execute(db);
    },
    createDataVersion,
  },
  writeTransaction: (db, work) => db.transaction().execute(work),
  async lockForWrite(trx, purpose, scopeKey) {
    await sql`select pg_advisory_xact_lock(${LOCK_CLASS}::int4, hashtext(${`${purpose}:${scopeKey}`}))`.execute(trx);
  },
  writeLockStatement: (purpose, scopeKey) => [
    'select pg_advisory_xact_lock(?::int4, hashtext(?))',
    [LOCK_CLASS, `${purpose}:${scopeKey}`],
  ],
  begin: (mode) => (mode === 'snapshot' ? 'begin isolation level repeatable read read only' : 'begin'),
  skipLocked: (query) => query.forUpdate().skipLocked(),
  byteOrder: 'collate "C"',
  staging: {
    tempSchema: 'pg_temp',
    ordColumn: 'ord bigint not null',
    mergeRefusesDuplicates: true,
    placeholders(text) {
      let n = 0;
      return text.replace(/\?/g, () => `$${++n}`);
    },
  },
};

/** Migration 4 on PostgreSQL: sis_data_versions and the statement-level trigger that moves it. */
async function createDataVersion(db: Kysely<Database>): Promise<void> {
  await db.schema
    .createTable('sis_data_versions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('sis_data_versions').values({ name: 'students', version: 1 }).execute();
  // Statement-level, in the writer's transaction: every writer (imports, admin commands, SQL
  // typed by hand) moves the version with its commit, once per statement whatever the rows.
  // The table is found through the trigger's own schema, not the writer's search_path.
  // The function's text is kept as migration 4 first wrote it (its indentation included): the database stores it.
  await sql`
        create function sis_bump_data_version() returns trigger language plpgsql as $$
        begin
          execute format('update %I.sis_data_versions set version = version + 1 where name = %L', tg_table_schema, tg_table_name);
          return null;
        end $$`.execute(db);
  await sql`
        create trigger students_data_version after insert or update or delete or truncate on students
        for each statement execute procedure sis_bump_data_version()`.execute(db);
  // Fires in replica mode too (a logical replication subscriber applying changes).
  await sql`alter table students enable always trigger students_data_version`.execute(db);
}
