/**
 * The schema's versions as data, oldest first: what each migration creates or changes, on both
 * dialects (its dialect-only steps and column types are the engines' Dialects). Append new ones;
 * never change what one that has shipped does. migrations.ts applies them.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import type { Database } from './tables.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  /** The dialect spells the column types and adds the objects only one of them has (dialect.ts). */
  up(db: Kysely<Database>, dialect: Dialect): Promise<void>;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'students, devices and auth codes',
    async up(db, dialect) {
      await db.schema
        .createTable('students')
        .addColumn('id_student', 'text', (c) => c.primaryKey())
        .addColumn('fullName', 'text')
        .addColumn('id_device', 'text')
        .addColumn('ShowActive', 'text')
        .addColumn('school_base_url', 'text')
        .addColumn('seq', dialect.ddl.bigint, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('students_school_active_seq')
        .on('students')
        .columns(['school_base_url', 'ShowActive', 'seq'])
        .execute();
      await db.schema
        .createTable('devices')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token', 'text')
        .execute();
      await db.schema
        .createTable('auth_codes')
        .addColumn('id', dialect.ddl.bigint, (c) => dialect.ddl.generatedKey(c))
        .addColumn('code', 'text')
        .addColumn('phone', 'text')
        .addColumn('created_at', dialect.ddl.timestamp, (c) => c.notNull())
        .execute();
    },
  },
  {
    version: 2,
    name: 'indexes for streamed exports and the next import position',
    async up(db, dialect) {
      // Export pages and max(seq) walk this index instead of scanning; seq is unique by construction.
      await db.schema.createIndex('students_seq').on('students').column('seq').unique().execute();
      // Devices are exported in byte order (as SQLite sorts), whatever the database's collation.
      await dialect.ddl.createByteOrderIndex(db, 'devices_id_bytes', 'devices', 'id');
    },
  },
  {
    version: 3,
    name: 'marks, push settings, the SMS outbox and the per-phone code count',
    async up(db, dialect) {
      const time = dialect.ddl.timestamp;
      // seq is unique by construction (import position), so it is the key and the order at once.
      await db.schema
        .createTable('marks')
        .addColumn('seq', dialect.ddl.bigint, (c) => c.primaryKey())
        .addColumn('id_student', 'text', (c) => c.notNull())
        .addColumn('SubjectID', 'text', (c) => c.notNull())
        .addColumn('SubjectName', 'text')
        .addColumn('Mark', 'text')
        .addColumn('Term', 'text')
        .addColumn('MarkDate', 'text')
        .addColumn('Note', 'text')
        .execute();
      await db.schema
        .createIndex('marks_student_subject_seq')
        .on('marks')
        .columns(['id_student', 'SubjectID', 'seq'])
        .execute();
      await db.schema
        .createTable('push_settings')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('ServerKey', 'text')
        .addColumn('SenderId', 'text')
        .execute();
      await db.schema
        .createTable('outbox')
        .addColumn('id', dialect.ddl.bigint, (c) => dialect.ddl.generatedKey(c))
        .addColumn('phone', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) =>
          c
            .notNull()
            .defaultTo('pending')
            .check(sql`state in ('pending', 'delivered', 'failed')`),
        )
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', time, (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('delivered_at', time)
        .addColumn('locked_by', 'text')
        .addColumn('locked_until', time)
        .execute();
      // Workers look only for due pending rows; delivered and failed ones pile up outside the index.
      await sql`create index outbox_due on outbox (next_attempt_at, id) where state = 'pending'`.execute(db);
      // AuthCode counts one phone's codes of the last hour inside its transaction.
      await db.schema.createIndex('auth_codes_phone_time').on('auth_codes').columns(['phone', 'created_at']).execute();
    },
  },
  {
    version: 4,
    name: 'a data version that every write to students moves (PostgreSQL)',
    async up(db, dialect) {
      // PostgreSQL's trigger and table; SQLite tells the version for free (dialect.ts says why).
      await dialect.ddl.createDataVersion(db);
    },
  },
  {
    version: 5,
    name: 'retention: indexes by age, delivered texts to erase, pruned-row counts',
    async up(db, dialect) {
      // The pruner takes the oldest rows in small batches; without these it would scan whole tables.
      await db.schema.createIndex('auth_codes_created').on('auth_codes').column('created_at').execute();
      // Pending messages are never pruned, so they stay out of this index (the predicate is the pruner's, literally).
      await sql`create index outbox_done_created on outbox (created_at, id) where state <> 'pending'`.execute(db);
      // Delivered messages stored before texts were erased at delivery: empty once the pruner has erased them.
      await sql`create index outbox_unerased on outbox (id) where state = 'delivered' and message <> ''`.execute(db);
      // Counted in the transaction that removes the rows. Each PostgreSQL connection adds to one of a
      // few slots (summed when read), so pruners of several instances do not queue on one counter row.
      await db.schema
        .createTable('pruned_rows')
        .addColumn('table_name', 'text', (c) => c.notNull())
        .addColumn('slot', 'integer', (c) => c.notNull())
        .addColumn('pruned', dialect.ddl.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('pruned_rows_key', ['table_name', 'slot'])
        .execute();
    },
  },
  {
    version: 6,
    name: 'beside the legacy service: comparison counts and kept differences',
    async up(db, dialect) {
      // Counts per minute, so a report can start anywhere; every instance adds to the same rows.
      await db.schema
        .createTable('shadow_counts')
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('service', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('binding', 'text', (c) => c.notNull())
        .addColumn('result', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('count', dialect.ddl.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('shadow_counts_key', ['bucket', 'service', 'operation', 'binding', 'result', 'kind'])
        .execute();
      await db.schema
        .createTable('shadow_differences')
        .addColumn('id', dialect.ddl.bigint, (c) => dialect.ddl.generatedKey(c))
        .addColumn('created_at', dialect.ddl.timestamp, (c) => c.notNull())
        .addColumn('service', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('binding', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('example', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('shadow_differences_kind')
        .on('shadow_differences')
        .columns(['service', 'operation', 'binding', 'kind'])
        .execute();
      await db.schema.createIndex('shadow_differences_created').on('shadow_differences').column('created_at').execute();
    },
  },
  {
    version: 7,
    name: 'SMS bill protection: shared counters, refusal counts, blocked ranges, the address key, codes by country',
    async up(db, dialect) {
      const time = dialect.ddl.timestamp;
      await db.schema.alterTable('auth_codes').addColumn('country', 'text').execute();
      await db.schema
        .createTable('sms_counters')
        .addColumn('counter', 'text', (c) => c.primaryKey())
        .addColumn('hits', dialect.ddl.bigint, (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sms_counters_expires').on('sms_counters').column('expires_at').execute();
      await db.schema
        .createTable('sms_refusals')
        .addColumn('period_start', time, (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('country', 'text', (c) => c.notNull())
        .addColumn('phone_range', 'text', (c) => c.notNull())
        .addColumn('refused', dialect.ddl.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('sms_refusals_key', ['period_start', 'reason', 'country', 'phone_range'])
        .execute();
      await db.schema
        .createTable('sms_blocked_ranges')
        .addColumn('phone_range', 'text', (c) => c.primaryKey())
        .addColumn('blocked_until', time)
        .addColumn('created_at', time, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sms_keys')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      // One key per database, so every instance hashes an address alike; it never leaves the database.
      await db
        .insertInto('sms_keys')
        .values({ name: 'address-hash', value: randomBytes(32).toString('hex') })
        .execute();
    },
  },
  {
    version: 8,
    name: "SMS for parents: test codes, delivery receipts, and each message's country and range",
    async up(db, dialect) {
      // Codes to SIS_SMS_TEST_NUMBERS: recorded, never sent, never counted (docs/sms.md).
      await db.schema
        .alterTable('auth_codes')
        .addColumn('test', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // Kept with the message so delivery rates per country and range outlive the phone's masking.
      for (const column of ['country', 'phone_range', 'receipt', 'receipt_reason'])
        await db.schema.alterTable('outbox').addColumn(column, 'text').execute();
      await db.schema.alterTable('outbox').addColumn('receipt_at', dialect.ddl.timestamp).execute();
      await db.schema.createIndex('outbox_receipt_at').on('outbox').column('receipt_at').execute();
    },
  },
  {
    version: 9,
    name: 'beside the legacy service: accepted differences, and the mode of each count',
    async up(db, dialect) {
      // A rule accepts a kind of difference (its id as the report names it) or a path pattern,
      // optionally within a service file, operation or binding ('' for any); `hits` adds up the
      // comparisons it accepted, from every instance.
      await db.schema
        .createTable('shadow_rules')
        .addColumn('id', dialect.ddl.bigint, (c) => dialect.ddl.generatedKey(c))
        .addColumn('created_at', dialect.ddl.timestamp, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('service', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('binding', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull())
        .addColumn('hits', dialect.ddl.bigint, (c) => c.notNull())
        .execute();
      // Counts by the mode they were taken in (legacy, compare: per operation since SIS_SHADOW
      // takes overrides); the key gains it, so the table is made anew ('' for counts before).
      await db.schema
        .createTable('shadow_counts_by_mode')
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('service', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('binding', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('result', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('count', dialect.ddl.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('shadow_counts_mode_key', [
          'bucket',
          'service',
          'operation',
          'binding',
          'mode',
          'result',
          'kind',
        ])
        .execute();
      await sql`insert into shadow_counts_by_mode (bucket, service, operation, binding, mode, result, kind, count)
        select bucket, service, operation, binding, '', result, kind, count from shadow_counts`.execute(db);
      await db.schema.dropTable('shadow_counts').execute();
      await db.schema.alterTable('shadow_counts_by_mode').renameTo('shadow_counts').execute();
    },
  },
  {
    version: 10,
    name: "SMS trace context: the traceparent each message's delivery carries",
    async up(db) {
      // The request's trace, so the gateway's POST joins it (docs/operations.md, Traces); null: none.
      await db.schema.alterTable('outbox').addColumn('traceparent', 'text').execute();
    },
  },
  {
    version: 11,
    name: 'SMS gateways: the gateway that sent each message and its id there',
    async up(db) {
      // SIS_SMS_GATEWAY may name several (a fallback): the row says which one took the message,
      // and the provider's own id, by which receipts that carry only that id (SMPP, Unifonic) find it.
      await db.schema.alterTable('outbox').addColumn('gateway', 'text').execute();
      await db.schema.alterTable('outbox').addColumn('gateway_message_id', 'text').execute();
      await db.schema
        .createIndex('outbox_gateway_message_id')
        .on('outbox')
        .columns(['gateway', 'gateway_message_id'])
        .execute();
    },
  },
  {
    version: 12,
    name: "AuthCode's deadline: a code's COMMIT that reaches the server after it is refused",
    async up(db, dialect) {
      // A COMMIT delivered after the partition it was sent into must not store a code whose caller got a fault.
      await dialect.ddl.createCommitDeadline(db);
    },
  },
  {
    version: 13,
    name: "AuthCode's deadline on the database server's clock: a duration from the transaction's start",
    async up(db, dialect) {
      // Migration 12 compared an instant of the service's clock with the server's: a service host
      // 3 s behind had every code refused at COMMIT (issue 44).
      await dialect.ddl.commitDeadlineOnServerClock(db);
    },
  },
];

/** The version a database has once every migration is applied. */
export const LATEST_SCHEMA_VERSION = migrations.at(-1)?.version ?? 0;
