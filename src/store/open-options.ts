/** What opening a store may be told (openStore, the engines' openers in sqlite/ and postgres/). */

export interface OpenStoreOptions {
  /** PostgreSQL connections in the pool (default 10). */
  readonly poolSize?: number;
  /** PostgreSQL: longest a statement may run (0: no limit). SQLite: longest a statement waits for a lock (default 5000). */
  readonly statementTimeoutMs?: number;
  /** PostgreSQL: longest wait for a connection, new or pooled (default 10000), so a silent network fails requests instead of hanging them. */
  readonly connectTimeoutMs?: number;
  /**
   * PostgreSQL: the longest a query, and a transaction from begin to commit, waits for its answer,
   * measured here; past it the connection is destroyed, and calls fail at once until a probe finds
   * the database back (postgres-deadlines.ts). Absent or 0: none (the commands, bulk imports).
   */
  readonly queryTimeoutMs?: number;
  /** The setting queryTimeoutMs comes from, named when a query passes it (default SIS_DATABASE_QUERY_TIMEOUT_MS). */
  readonly queryTimeoutSetting?: string;
  /** PostgreSQL, with queryTimeoutMs: the most calls waiting for a connection at once (default 100). */
  readonly maxWaiting?: number;
  /** PostgreSQL application_name, shown in pg_stat_activity (default "sis"; an application_name in the URL wins). */
  readonly applicationName?: string;
  /** PostgreSQL schema to use, created if missing; wins over the URL's `?schema=`. */
  readonly schema?: string;
  /**
   * Errors of connections nobody is waiting on (the server restarted, a connection was killed). The
   * pool replaces those connections; this only reports them. Never thrown: they must not crash the process.
   */
  readonly onBackgroundError?: (error: Error) => void;
  /**
   * PostgreSQL, with queryTimeoutMs: a writable server found again after only read-only ones were
   * (a switchover's end: the probe's new connection was judged writable), before any write tells it.
   */
  readonly onWritableAgain?: () => void;
  /**
   * "apply" (default): create the database and apply missing migrations. "require": change nothing,
   * refuse a database that does not exist or is not at this program's schema version.
   */
  readonly migrations?: MigrationsMode;
}

export type MigrationsMode = 'apply' | 'require';
