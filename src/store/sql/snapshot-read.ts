/**
 * A read of one consistent state of the database that lasts while its answer is sent: a large
 * list read page by page. It holds a connection of its own (SQLite: sqlite/sqlite-readers.ts;
 * PostgreSQL: a pooled connection in a REPEATABLE READ READ ONLY transaction, postgres/postgres-snapshot.ts),
 * so pages read later see the database as the first one did, whatever imports commit meanwhile.
 */
import type { CompiledQuery } from 'kysely';

export interface SnapshotRead {
  /** The query's rows as arrays, in its column order. */
  rows(query: CompiledQuery): Promise<ReadonlyArray<readonly unknown[]>>;
  /** Ends the transaction and gives the connection back. Never throws; idempotent. */
  end(): Promise<void>;
}
