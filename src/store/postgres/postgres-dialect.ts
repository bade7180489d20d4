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
    createCommitDeadline,
    commitDeadlineOnServerClock,
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

/**
 * Migration 12 on PostgreSQL: a deferred constraint trigger on auth_codes that refuses the COMMIT
 * of a transaction whose `sis.commit_by` (ms since the epoch, set with its begin) has passed by the
 * server's clock. A COMMIT sent into a partition and delivered when it ends rolls back: the caller
 * was answered a fault when the deadline passed, so the code and its SMS must not be kept.
 * Connections that set nothing (the commands) are not checked.
 */
async function createCommitDeadline(db: Kysely<Database>): Promise<void> {
  await sql`
        create function sis_check_commit_by() returns trigger language plpgsql as $$
        declare
          commit_by text := current_setting('sis.commit_by', true);
        begin
          if commit_by <> '' and clock_timestamp() > to_timestamp(commit_by::double precision / 1000) then
            raise exception 'commit after its deadline (sis.commit_by %): the caller was answered a fault, nothing is kept', commit_by
              using errcode = '57014';
          end if;
          return null;
        end $$`.execute(db);
  await sql`
        create constraint trigger auth_codes_commit_by after insert on auth_codes
        deferrable initially deferred for each row execute procedure sis_check_commit_by()`.execute(db);
}

/**
 * Migration 13 on PostgreSQL: the deadline as `sis.commit_within` (ms from the transaction's start,
 * `transaction_timestamp()`, to `clock_timestamp()`: both the server's clock, so no difference
 * between the service's host and the server refuses a code). `sis.commit_by` (an instance not yet
 * upgraded, during a rolling upgrade) is still checked as migration 12 did.
 */
async function commitDeadlineOnServerClock(db: Kysely<Database>): Promise<void> {
  await sql`
        create or replace function sis_check_commit_by() returns trigger language plpgsql as $$
        declare
          commit_within text := current_setting('sis.commit_within', true);
          commit_by text := current_setting('sis.commit_by', true);
        begin
          if coalesce(commit_within, '') <> '' then
            if clock_timestamp() > transaction_timestamp() + commit_within::double precision * interval '1 millisecond' then
              raise exception 'commit after its deadline (sis.commit_within % ms): the caller was answered a fault, nothing is kept', commit_within
                using errcode = '57014';
            end if;
          elsif coalesce(commit_by, '') <> '' and clock_timestamp() > to_timestamp(commit_by::double precision / 1000) then
            raise exception 'commit after its deadline (sis.commit_by %): the caller was answered a fault, nothing is kept', commit_by
              using errcode = '57014';
          end if;
          return null;
        end $$`.execute(db);
}
