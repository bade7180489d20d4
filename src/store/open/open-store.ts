/**
 * Opens the store named by a database URL, or looks at that database without changing it (`sis
 * check`). The one place a dialect is chosen: by the URL (database-url.ts says which scheme is
 * which). Everything else is handed the Dialect, or the store opened with it, and asks it what it
 * does; only the dialect modules themselves know which one they are.
 *
 * Opening, the engine's opener prepares the connection (SQLite: WAL and a busy timeout;
 * PostgreSQL: pool, time-outs, search_path) and migrates. Looking, SQLite is read through a
 * connection that may only read (query_only; after checking the service's user could write the
 * file and its directory), PostgreSQL in read-only transactions; failures are the start-up errors
 * the service would meet (sqlite-open-error.ts, postgres-open-error.ts), so the check and the
 * start say the same thing.
 */
import type { OpenStoreOptions } from '../open-options.js';
import { postgres } from '../postgres/postgres-dialect.js';
import { inspectPostgres, openPostgres } from '../postgres/postgres-open.js';
import type { Dialect } from '../schema/dialect.js';
import type { DatabaseInspection } from '../schema/migrations.js';
import type { SqlStore } from '../sql/sql-store.js';
import { sqlite } from '../sqlite/sqlite-dialect.js';
import { inspectSqlite, openSqlite } from '../sqlite/sqlite-open.js';
import { parseDatabaseUrl } from './database-url.js';

export type { OpenStoreOptions } from '../open-options.js';
export type { DatabaseInspection } from '../schema/migrations.js';

/** A database named by a URL: its dialect, and how to open it or look at it. */
interface DatabaseAt {
  readonly dialect: Dialect;
  /** Opens the store and migrates it (or requires it current: options.migrations). */
  open(options: OpenStoreOptions): Promise<SqlStore>;
  /** Where its schema stands, changing nothing (`sis check`). */
  inspect(connectTimeoutMs: number): Promise<DatabaseInspection>;
}

/** Throws DatabaseUrlError for a URL that names no database this program can use. */
function databaseAt(url: string): DatabaseAt {
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

export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<SqlStore> {
  return databaseAt(databaseUrl).open(options);
}

export async function inspectDatabase(url: string, connectTimeoutMs = 5000): Promise<DatabaseInspection> {
  return databaseAt(url).inspect(connectTimeoutMs);
}

/** The dialect of a database URL, for what depends on it before (or beside) opening. Throws DatabaseUrlError. */
export function dialectFor(url: string): Dialect {
  return databaseAt(url).dialect;
}
