/**
 * SQLite's data version (Store.dataVersion, what the answer cache keys its answers with): a token
 * read before the data, which moves with every commit that may change what a cached answer holds.
 */
import type { DataVersionReader } from '../sql/engine-parts.js';

const SQLITE_VERSION = 'select data_version, total_changes() from pragma_data_version()';

/**
 * SQLite: `data_version` moves with other connections' commits, `total_changes()` with this
 * connection's own writes. Read synchronously on the store's connection (its cost: bench/RESULTS.md).
 */
export function sqliteDataVersion(
  read: (sql: string, parameters: readonly unknown[], arrays: boolean) => unknown[],
): DataVersionReader {
  return () => {
    const [row] = read(SQLITE_VERSION, [], true) as [[number, number]];
    return `${row[0]}:${row[1]}`;
  };
}
