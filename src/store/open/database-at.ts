/**
 * The one place a dialect is chosen: by the database URL (database-url.ts says which scheme is
 * which). Everything else is handed the Dialect, or the store opened with it, and asks it what it
 * does; only the dialect modules themselves know which one they are.
 */
import { parseDatabaseUrl } from './database-url.js';
import type { DatabaseInspection } from '../schema/inspection.js';
import type { OpenStoreOptions } from '../open-options.js';
import type { SqlStore } from '../sql/sql-store.js';
import type { Dialect } from '../schema/dialect.js';
import { inspectPostgres, openPostgres } from '../postgres/postgres-open.js';
import { postgres } from '../postgres/postgres-dialect.js';
import { inspectSqlite, openSqlite } from '../sqlite/sqlite-open.js';
import { sqlite } from '../sqlite/sqlite-dialect.js';

/** A database named by a URL: its dialect, and how to open it or look at it. */
export interface DatabaseAt {
  readonly dialect: Dialect;
  /** Opens the store and migrates it (or requires it current: options.migrations). */
  open(options: OpenStoreOptions): Promise<SqlStore>;
  /** Where its schema stands, changing nothing (`sis check`). */
  inspect(connectTimeoutMs: number): Promise<DatabaseInspection>;
}

/** Throws DatabaseUrlError for a URL that names no database this program can use. */
export function databaseAt(url: string): DatabaseAt {
  const target = parseDatabaseUrl(url);
  switch (target.dialect) {
    case 'sqlite':
      return {
        dialect: sqlite,
        open: (options) => openSqlite(target.path, options),
        inspect: async () => inspectSqlite(target.path),
      };
    case 'postgres':
      return {
        dialect: postgres,
        open: (options) => openPostgres(target, options),
        inspect: (timeoutMs) => inspectPostgres(target, timeoutMs),
      };
  }
}

/** The dialect of a database URL, for what depends on it before (or beside) opening. Throws DatabaseUrlError. */
export function dialectFor(url: string): Dialect {
  return databaseAt(url).dialect;
}
