/**
 * Retention's writes on SQLite, each batch one synchronous IMMEDIATE transaction over prepared
 * statements: no await inside, so the connection is never left mid-transaction for AuthCode's
 * synchronous write to find (sqlite-auth-code.ts), and the write lock is held only for the batch.
 * The connection runs with secure_delete on (sqlite-open.ts): removed and erased bytes are
 * zeroed in the pages, and `compactLog` empties the write-ahead log that still holds their old images.
 */
import { MASKED_PHONE_SQL } from '../phone-mask.js';
import type { RetentionBatches, RetentionTable } from '../retention-types.js';
import type { SqliteConnection } from './sqlite-driver.js';

interface SqliteRetention {
  /** Rows removed, or null while the connection is inside another (Kysely) transaction: try again shortly. */
  prune(table: RetentionTable, before: string, limit: number): number | null;
  /** Texts erased, or null as above. */
  erase(limit: number): number | null;
  /** A TRUNCATE checkpoint that never waits; false when something was in the way. */
  compactLog(): boolean;
}

/** The oldest rows first; the predicates are those of the indexes of migration 5, literally. */
const PRUNE_SQL: Readonly<Record<RetentionTable, string>> = {
  auth_codes:
    'delete from auth_codes where id in (select id from auth_codes where created_at < ? order by created_at limit ?)',
  outbox:
    "delete from outbox where id in (select id from outbox where state <> 'pending' and created_at < ? order by created_at limit ?)",
};

export const ERASE_SQL = `update outbox set code = '', message = '', phone = ${MASKED_PHONE_SQL} where id in (select id from outbox where state = 'delivered' and message <> '' limit ?)`;

function synchronousRetention(database: SqliteConnection): SqliteRetention {
  const prune = { auth_codes: database.prepare(PRUNE_SQL.auth_codes), outbox: database.prepare(PRUNE_SQL.outbox) };
  const count = database.prepare(
    'insert into pruned_rows (table_name, slot, pruned) values (?, 0, ?) on conflict (table_name, slot) do update set pruned = pruned + excluded.pruned',
  );
  const erase = database.prepare(ERASE_SQL);
  const pruneBatch = (table: RetentionTable, before: string, limit: number): number => {
    const removed = prune[table].run([before, limit]).changes;
    if (removed > 0) count.run([table, removed]);
    return removed;
  };
  return {
    prune: (table, before, limit) =>
      database.inTransaction ? null : database.immediate(() => pruneBatch(table, before, limit)),
    erase: (limit) => (database.inTransaction ? null : database.immediate(() => erase.run([limit]).changes)),
    compactLog() {
      if (database.inTransaction) return false;
      // Without a busy handler: a checkpoint that waited would hold the write lock (and AuthCode) meanwhile.
      const [timeout] = database.pragma('busy_timeout') as [number];
      database.exec('pragma busy_timeout = 0');
      try {
        // The first column: 1 when a reader or writer was in the way.
        const busy = database.pragma('wal_checkpoint(TRUNCATE)')?.[0];
        return busy === undefined || busy === 0;
      } finally {
        database.exec(`pragma busy_timeout = ${Number(timeout)}`);
      }
    },
  };
}

/** While the connection is inside another transaction, a batch waits this long and tries again. */
const BUSY_RETRY_MS = 5;

/** Retention's batches on the store's connection (prepared once the tables exist). */
export function sqliteRetention(database: SqliteConnection): RetentionBatches {
  const direct = synchronousRetention(database);
  return {
    prune: (table, before, limit) => retryWhileBusy(() => direct.prune(table, before, limit)),
    erase: (limit) => retryWhileBusy(() => direct.erase(limit)),
    compactLog: async () => direct.compactLog(),
  };
}

async function retryWhileBusy(attempt: () => number | null): Promise<number> {
  for (;;) {
    const done = attempt();
    if (done !== null) return done;
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
}
