/**
 * A read of one consistent state of the database that lasts while its answer is sent: a large
 * list read page by page. It holds a connection of its own (SQLite: sqlite-readers.ts; PostgreSQL:
 * a pooled connection in a REPEATABLE READ READ ONLY transaction), so pages read later see the
 * database as the first one did, whatever imports commit meanwhile.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';

export interface SnapshotRead {
  /** The query's rows as arrays, in its column order. */
  rows(query: CompiledQuery): Promise<ReadonlyArray<readonly unknown[]>>;
  /** Ends the transaction and gives the connection back. Never throws; idempotent. */
  end(): Promise<void>;
}

/** PostgreSQL: a pooled connection in a read-only repeatable-read transaction, taken now. */
export async function postgresSnapshot(db: Kysely<Database>): Promise<SnapshotRead> {
  const trx = await db.startTransaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute();
  let ended: Promise<void> | null = null;
  return {
    async rows(query) {
      // Kysely hands rows over as objects; their keys are in the query's column order.
      const result = await trx.executeQuery<Record<string, unknown>>(query);
      return result.rows.map((row) => Object.values(row));
    },
    end() {
      // Rollback: nothing was written, and Kysely gives the connection back even when it fails.
      ended ??= trx
        .rollback()
        .execute()
        .catch(() => undefined);
      return ended;
    },
  };
}
