/** PostgreSQL's snapshot reads (SnapshotRead, sql/engine-parts.ts), for streamed lists. */
import type { Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';
import type { SnapshotRead } from '../sql/engine-parts.js';

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
