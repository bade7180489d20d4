/**
 * The data version the answer cache keys its answers with (Store.dataVersion): a token read before
 * the data, which moves with every commit that may change what a cached answer holds.
 */
import type { Pool } from 'pg';

export type DataVersionReader = () => string | null | Promise<string | null>;

const SQLITE_VERSION = 'select data_version, total_changes() from pragma_data_version()';

/**
 * SQLite: `data_version` moves with other connections' commits, `total_changes()` with this
 * connection's own writes. Read synchronously on the store's connection (2-3 µs).
 */
export function sqliteDataVersion(read: (sql: string, parameters: readonly unknown[], arrays: boolean) => unknown[]): DataVersionReader {
  return () => {
    const [row] = read(SQLITE_VERSION, [], true) as [[number, number]];
    return `${row[0]}:${row[1]}`;
  };
}

/**
 * PostgreSQL: the `students` row of sis_data_versions, which a trigger moves in the transaction of
 * every statement writing the students table (migration 4): one primary-key lookup, a named
 * statement (parsed once per connection), straight on the pool. The table is named with its
 * schema because a connection taken here may not have had its search_path set yet. Null when the
 * row is missing (nothing is kept then).
 */
export function postgresDataVersion(pool: Pool, schema: string | null): DataVersionReader {
  const table = schema === null ? 'sis_data_versions' : `"${schema.replace(/"/g, '""')}".sis_data_versions`;
  const query = { name: 'sis_data_version', text: `select version::text from ${table} where name = 'students'`, rowMode: 'array' as const };
  return () => pool.query<[string]>(query).then((result) => result.rows[0]?.[0] ?? null);
}
