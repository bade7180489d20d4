/**
 * The end of opening that both dialects share: migrate (or require the schema to be current), then
 * wrap the connection in a SqlStore; on failure, close what the opener made.
 */
import type { Kysely } from 'kysely';
import type { Dialect } from '../schema/dialect.js';
import { migrate, requireUpToDate } from '../schema/migrations.js';
import type { MigrationsMode } from '../open-options.js';
import type { RetentionBatches } from '../retention-types.js';
import type { Database } from '../schema/tables.js';
import type { DirectAuthCode } from '../sqlite-auth-code.js';
import { SqlStore } from './sql-store.js';
import type { SqlStoreOptions } from './sql-store.js';

/** What the dialect's opener made, beside the Kysely instance. The thunks run once the tables exist (after migrating). */
export type OpenedParts = Pick<
  SqlStoreOptions,
  'directRead' | 'readers' | 'snapshot' | 'snapshotSlots' | 'dataVersion' | 'bulkSession'
> & {
  readonly directAuthCode?: () => DirectAuthCode;
  readonly retention: () => RetentionBatches;
};

export interface OpenedDatabase {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Keys the advisory locks, so isolated schemas do not wait on each other. */
  readonly lockScope: string;
  /** The schema to create and migrate; null means whatever search_path names. */
  readonly schema: string | null;
}

export async function readyStore(opened: OpenedDatabase, mode: MigrationsMode, parts: OpenedParts): Promise<SqlStore> {
  const { db, dialect, lockScope, schema } = opened;
  try {
    const applied = mode === 'apply' ? await migrate(db, { dialect, schema }) : (await requireUpToDate(db), []);
    const { directAuthCode, retention, ...rest } = parts;
    return new SqlStore(db, {
      dialect,
      lockScope,
      migrationsApplied: applied,
      ...rest,
      retention: retention(),
      ...(directAuthCode ? { directAuthCode: directAuthCode() } : {}),
    });
  } catch (error) {
    parts.readers?.close();
    await db.destroy();
    throw error;
  }
}
