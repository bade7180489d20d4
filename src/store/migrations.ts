/**
 * Versioned migrations as data. `migrate` applies the missing ones on open, in one transaction, and
 * records each in sis_migrations; on PostgreSQL an advisory lock lets several instances start at once.
 * Append new migrations; never edit one that has shipped.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database, DialectName } from './schema.js';
import { lockForWrite, writeTransaction } from './transaction.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  up(db: Kysely<Database>, dialect: DialectName): Promise<void>;
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
        .addColumn('seq', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
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
        .addColumn('id', dialect === 'postgres' ? 'bigint' : 'integer', (c) =>
          dialect === 'postgres' ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
        )
        .addColumn('code', 'text')
        .addColumn('phone', 'text')
        .addColumn('created_at', dialect === 'postgres' ? 'timestamptz' : 'text', (c) => c.notNull())
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
  readonly dialect: DialectName;
  /** PostgreSQL schema to create and migrate; null means whatever search_path names. */
  readonly schema: string | null;
}

/** Applies the missing migrations; returns the versions it applied (none when up to date). */
export async function migrate(db: Kysely<Database>, options: MigrateOptions): Promise<number[]> {
  const { dialect, schema } = options;
  // Usual case, an up-to-date database: no write lock, so opening never waits on a running import.
  if (await isUpToDate(db)) return [];
  return writeTransaction(db, dialect, async (trx) => {
    await lockForWrite(trx, dialect, 'migrate', schema ?? '');
    // Under the lock: a concurrent "create schema if not exists" could otherwise fail on a unique index.
    if (dialect === 'postgres' && schema !== null) await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
    await trx.schema
      .createTable('sis_migrations')
      .ifNotExists()
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'text', (c) => c.notNull())
      .execute();
    const rows = await trx.selectFrom('sis_migrations').select('version').execute();
    const applied = new Set(rows.map((r) => Number(r.version)));
    const newest = migrations.at(-1)?.version ?? 0;
    const unknown = [...applied].filter((v) => v > newest);
    if (unknown.length > 0) {
      throw new MigrationError(
        `the database has schema version ${Math.max(...unknown)}, newer than this program knows (${newest}); upgrade the program`,
      );
    }
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

async function isUpToDate(db: Kysely<Database>): Promise<boolean> {
  let applied: Set<number>;
  try {
    const rows = await db.selectFrom('sis_migrations').select('version').execute();
    applied = new Set(rows.map((r) => Number(r.version)));
  } catch {
    return false; // no migrations table yet (or no schema): the locked path creates it
  }
  // Exactly the known set; a newer database takes the locked path, which says so.
  return applied.size === migrations.length && migrations.every((m) => applied.has(m.version));
}
