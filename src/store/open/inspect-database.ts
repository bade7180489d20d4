/**
 * Looks at the database `sis check` is pointed at without changing it: SQLite through a connection
 * that may only read (query_only; after checking the service's user could write the file and its
 * directory), PostgreSQL in read-only transactions (the engines' openers, sqlite/ and postgres/). Says
 * where its schema stands; failures are the start-up errors the service would meet (sqlite-open-error.ts, postgres-open-error.ts),
 * so the check and the start say the same thing.
 */
import type { DatabaseInspection } from '../schema/inspection.js';
import { databaseAt } from './database-at.js';

export type { DatabaseInspection } from '../schema/inspection.js';

export async function inspectDatabase(url: string, connectTimeoutMs = 5000): Promise<DatabaseInspection> {
  return databaseAt(url).inspect(connectTimeoutMs);
}
