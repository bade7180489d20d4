/**
 * Opens the store named by a database URL: the URL chooses the engine (database-at.ts),
 * whose opener prepares the connection (SQLite: WAL and a busy timeout; PostgreSQL: pool,
 * time-outs, search_path) and migrates.
 */
import { databaseAt } from './database-at.js';
import type { OpenStoreOptions } from '../open-options.js';
import type { SqlStore } from '../sql/sql-store.js';

export type { OpenStoreOptions } from '../open-options.js';

export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<SqlStore> {
  return databaseAt(databaseUrl).open(options);
}
