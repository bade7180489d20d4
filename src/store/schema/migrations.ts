/**
 * Versioned migrations as data. `migrate` applies the missing ones on open, in one transaction, and
 * records each in sis_migrations; on PostgreSQL an advisory lock lets several instances start at once.
 * Append new migrations; never change what one that has shipped does (its dialect-only steps and
 * column types are the engines' Dialects, sqlite/ and postgres/: moving code there must leave the schema as it was).
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import type { Database } from './tables.js';
import { SchemaTooNewError } from '../../errors/startup-errors.js';

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
];

export class MigrationError extends Error {
  readonly code = 'ERR_MIGRATION';
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

export interface MigrateOptions {
  readonly dialect: Dialect;
  /** PostgreSQL schema to create and migrate; null means whatever search_path names. */
  readonly schema: string | null;
}

/** Applies the missing migrations; returns the versions it applied (none when up to date). */
export async function migrate(db: Kysely<Database>, options: MigrateOptions): Promise<number[]> {
  const { dialect, schema } = options;
  // Usual case, an up-to-date database: no write lock, so opening never waits on a running import.
  // A newer database is refused here, before any lock or write: it is left exactly as it is.
  const before = await appliedRows(db);
  refuseNewer(before);
  if (isCurrent(before)) return [];
  return dialect.writeTransaction(db, async (trx) => {
    await dialect.lockForWrite(trx, 'migrate', schema ?? '');
    // Under the lock: a concurrent "create schema if not exists" could otherwise fail on a unique index.
    await dialect.ddl.createSchema(trx, schema);
    await trx.schema
      .createTable('sis_migrations')
      .ifNotExists()
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'text', (c) => c.notNull())
      .execute();
    // Again under the lock: another instance, a newer one perhaps, may have migrated meanwhile.
    const rows = (await appliedRows(trx)) ?? [];
    refuseNewer(rows);
    const applied = new Set(rows.map((r) => r.version));
    const done: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await m.up(trx, dialect);
      await trx
        .insertInto('sis_migrations')
        .values({ version: m.version, name: m.name, applied_at: new Date().toISOString() })
        .execute();
      done.push(m.version);
    }
    return done;
  });
}

interface AppliedRow {
  readonly version: number;
  readonly name: string;
  readonly appliedAt: string;
}

/** Throws SchemaTooNewError when the database holds a migration this program does not know. */
function refuseNewer(rows: readonly AppliedRow[] | null): void {
  const newest = rows?.reduce<AppliedRow | null>((a, r) => (a === null || r.version > a.version ? r : a), null) ?? null;
  if (newest !== null && newest.version > LATEST_SCHEMA_VERSION) {
    throw new SchemaTooNewError(newest.version, LATEST_SCHEMA_VERSION, {
      name: newest.name,
      appliedAt: newest.appliedAt,
    });
  }
}

/** Exactly the known set of migrations. */
function isCurrent(rows: readonly AppliedRow[] | null): boolean {
  const applied = new Set(rows?.map((r) => r.version));
  return rows !== null && applied.size === migrations.length && migrations.every((m) => applied.has(m.version));
}

/** The migrations recorded in the database, or null when it has no migrations table (never migrated). */
async function appliedRows(db: Kysely<Database>): Promise<AppliedRow[] | null> {
  try {
    const rows = await db.selectFrom('sis_migrations').select(['version', 'name', 'applied_at']).execute();
    return rows.map((r) => ({ version: Number(r.version), name: String(r.name), appliedAt: String(r.applied_at) }));
  } catch (error) {
    // No migrations table yet (or no schema): the locked path creates it. Anything else (a lost
    // connection) is not "never migrated" and must not be reported as such.
    if (isMissingTable(error)) return null;
    throw error;
  }
}

function isMissingTable(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === '42P01' || (typeof message === 'string' && message.startsWith('no such table'));
}

/** The newest version this program knows. */
export const LATEST_SCHEMA_VERSION = migrations.at(-1)?.version ?? 0;

/** Where a database stands against this program, without changing it (`sis check`). */
export type SchemaStatus =
  | { readonly state: 'empty' }
  | { readonly state: 'current'; readonly version: number }
  | { readonly state: 'pending'; readonly version: number; readonly pending: readonly number[] };

/** Throws SchemaTooNewError for a database newer than the program. */
export async function schemaStatus(db: Kysely<Database>): Promise<SchemaStatus> {
  const rows = await appliedRows(db);
  refuseNewer(rows);
  if (rows === null || rows.length === 0) return { state: 'empty' };
  const version = Math.max(...rows.map((r) => r.version));
  if (isCurrent(rows)) return { state: 'current', version };
  const applied = new Set(rows.map((r) => r.version));
  return {
    state: 'pending',
    version,
    pending: migrations.filter((m) => !applied.has(m.version)).map((m) => m.version),
  };
}

/**
 * Refuses a database that is not exactly at this program's schema version, without changing it:
 * for tools that must not migrate (they say to run `sis migrate`). Returns the version.
 */
export async function requireUpToDate(db: Kysely<Database>): Promise<number> {
  const status = await schemaStatus(db);
  if (status.state === 'current') return status.version;
  throw new MigrationError(
    status.state === 'empty'
      ? 'the database has no tables yet; run `sis migrate` (or start the service) first'
      : `the database has schema version ${status.version}, this program needs ${LATEST_SCHEMA_VERSION}; run \`sis migrate\` first`,
  );
}
