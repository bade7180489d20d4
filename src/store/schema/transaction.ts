/**
 * A transaction on a connection the caller already holds (`db.connection()`), for work that spans
 * several transactions on one session (temporary tables) or must stay on one connection (SQLite's
 * write transactions). The dialect says how each mode begins (dialect.ts).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Dialect, TransactionMode } from './dialect.js';
import type { Database } from './tables.js';

export async function pinnedTransaction<T>(
  conn: Kysely<Database>,
  dialect: Dialect,
  mode: TransactionMode,
  work: () => Promise<T>,
): Promise<T> {
  await sql.raw(dialect.begin(mode)).execute(conn);
  try {
    const result = await work();
    await sql`commit`.execute(conn);
    return result;
  } catch (error) {
    // The database may already have rolled back (e.g. SQLite's disk full); the original error is the one to report.
    await sql`rollback`.execute(conn).catch(() => undefined);
    throw error;
  }
}
