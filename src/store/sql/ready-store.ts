/**
 * The end of opening that both engines share: migrate (or require the schema to be current), then
 * wrap the engine's parts in a SqlStore; on failure, close what the opener made.
 */
import type { Kysely } from 'kysely';
import type { MigrationsMode } from '../open-options.js';
import type { Dialect } from '../schema/dialect.js';
import { migrate, requireUpToDate } from '../schema/migrations.js';
import type { Database } from '../schema/tables.js';
import type { EngineParts } from './engine-parts.js';
import { SqlStore } from './sql-store.js';

export interface OpenedDatabase {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** The schema to create and migrate; null means whatever search_path names. */
  readonly schema: string | null;
  /** Closes what the opener made (the store's own close, once it exists). */
  close(): Promise<void>;
}

/** `parts` runs once the tables exist (after migrating): engines prepare statements on them. */
export async function readyStore(
  opened: OpenedDatabase,
  mode: MigrationsMode,
  parts: (migrationsApplied: readonly number[]) => EngineParts,
): Promise<SqlStore> {
  const { db, dialect, schema } = opened;
  try {
    const applied = mode === 'apply' ? await migrate(db, { dialect, schema }) : (await requireUpToDate(db), []);
    return new SqlStore(parts(applied));
  } catch (error) {
    await opened.close();
    throw error;
  }
}
