/**
 * Applying the versioned migrations (their list: migration-list.ts). `migrate` applies the
 * missing ones on open, in one transaction, and records each in sis_migrations; on PostgreSQL an
 * advisory lock lets several instances start at once.
 */
import type { Kysely } from 'kysely';
import { SchemaTooNewError } from '../../errors/startup-errors.js';
import type { Dialect } from './dialect.js';
import { LATEST_SCHEMA_VERSION, migrations } from './migration-list.js';
import type { Database } from './tables.js';

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

/** Where a database stands against this program, without changing it (`sis check`). */
export type SchemaStatus =
  | { readonly state: 'empty' }
  | { readonly state: 'current'; readonly version: number }
  | { readonly state: 'pending'; readonly version: number; readonly pending: readonly number[] };

/** What `sis check` learns of a database without changing it (open/open-store.ts, inspectDatabase). */
export type DatabaseInspection =
  | { readonly state: 'memory' }
  /** A SQLite file not made yet (the service makes it; its directory is writable). */
  | { readonly state: 'missing'; readonly path: string }
  | (SchemaStatus & { readonly where: string });

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
