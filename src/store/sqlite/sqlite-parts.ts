/**
 * SQLite's parts of the store (sql/engine-parts.ts), made once the tables exist: reads straight on
 * the one connection's (reused) prepared statements, AuthCode's and retention's synchronous
 * transactions, the data version for free, and read-only connections for snapshot reads.
 */
import type { Kysely } from 'kysely';
import { kyselyBulkSession } from '../import/bulk-session.js';
import type { Database } from '../schema/tables.js';
import type { EngineParts, EngineReads } from '../sql/engine-parts.js';
import { sqliteAuthCodeWriter } from './sqlite-auth-code.js';
import { sqliteDataVersion } from './sqlite-data-version.js';
import { sqlite } from './sqlite-dialect.js';
import type { SqliteConnection } from './sqlite-driver.js';
import type { SqliteReaders } from './sqlite-readers.js';
import { sqliteRetention } from './sqlite-retention.js';

/** Most streamed lists read at once, each on a read-only connection of its own. */
export const SNAPSHOT_SLOTS = 4;

export interface SqliteConnections {
  /** The one connection every write and every short read goes through. */
  readonly database: SqliteConnection;
  /** Kysely over `database`. */
  readonly db: Kysely<Database>;
  /** The read-only connections for snapshot reads; null for an in-memory database, which has no second connection. */
  readonly readers: SqliteReaders | null;
}

export function sqliteParts(connections: SqliteConnections, migrationsApplied: readonly number[]): EngineParts {
  const { database, db, readers } = connections;
  // Straight to the (reused) prepared statement: no driver queue or promise hop.
  const direct = (source: string, parameters: readonly unknown[], arrays: boolean): unknown[] =>
    database.prepare(source).all(parameters, arrays);
  const value = (source: string, parameters: readonly unknown[]): unknown =>
    (database.prepare(source).get(parameters, true) as unknown[] | undefined)?.[0];
  return {
    db,
    dialect: sqlite,
    lockScope: '',
    migrationsApplied,
    reads: directReads(direct, value),
    authCode: sqliteAuthCodeWriter(database),
    dataVersion: sqliteDataVersion(direct),
    retention: sqliteRetention(database),
    bulkSession: kyselyBulkSession(db, sqlite),
    snapshots: {
      open: readers === null ? null : async () => readers.begin(),
      slots: SNAPSHOT_SLOTS,
      connections: () => readers?.open ?? 0,
    },
    // A file on this host: one clock.
    serverClock: async () => null,
    close: closeSqlite(connections),
  };
}

/**
 * Reads run synchronously on the one connection. They then see the connection's own uncommitted
 * writes; the service writes students and devices only through imports, which run in another
 * process (or before it listens).
 */
function directReads(
  direct: (source: string, parameters: readonly unknown[], arrays: boolean) => unknown[],
  value: (source: string, parameters: readonly unknown[]) => unknown,
): EngineReads {
  return {
    rows<R>(source: string, parameters: readonly unknown[]): R[] {
      // No query object, no driver queue, no promise: the rows at once.
      return direct(source, parameters, false) as R[];
    },
    value,
    async arrays(query) {
      return direct(query.sql, query.parameters, true) as unknown[][];
    },
  };
}

/** Closes the reader connections, then the one connection. */
export function closeSqlite({ db, readers }: SqliteConnections): () => Promise<void> {
  return async () => {
    readers?.close();
    await db.destroy();
  };
}
