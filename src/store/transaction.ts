/**
 * Write transactions that behave the same on both dialects. SQLite starts them IMMEDIATE: taking the
 * write lock up front means two processes queue on the busy timeout instead of one failing at once
 * when both try to upgrade a read lock.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database, DialectName } from './schema.js';

export async function writeTransaction<T>(
  db: Kysely<Database>,
  dialect: DialectName,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  if (dialect === 'postgres') return db.transaction().execute(work);
  // One connection for the whole callback: Kysely's SQLite driver holds its mutex until it returns.
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      // SQLite may already have rolled back (e.g. disk full); the original error is the one to report.
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw error;
    }
  });
}

/**
 * Serialises writers on PostgreSQL until the transaction ends. The key includes the schema so
 * isolated schemas (tests) do not wait on each other.
 */
export async function lockForWrite(trx: Kysely<Database>, dialect: DialectName, purpose: string, schemaKey: string): Promise<void> {
  if (dialect !== 'postgres') return; // SQLite's IMMEDIATE transaction already holds the only write lock
  await sql`select pg_advisory_xact_lock(${LOCK_CLASS}::int4, hashtext(${`${purpose}:${schemaKey}`}))`.execute(trx);
}

/** `lockForWrite`'s lock as SQL text (`?` placeholders) and parameters, for sessions outside Kysely. */
export function advisoryLock(purpose: string, schemaKey: string): [string, unknown[]] {
  return ['select pg_advisory_xact_lock(?::int4, hashtext(?))', [LOCK_CLASS, `${purpose}:${schemaKey}`]];
}

/** First half of the two-key advisory lock: "SIS" plus 1, unlikely to collide with other applications. */
const LOCK_CLASS = 0x53495301;

/**
 * A transaction on a connection the caller already holds (`db.connection()`), for work that spans
 * several transactions on one session (temporary tables). "write" takes SQLite's write lock up
 * front; "snapshot" reads one consistent state (PostgreSQL: repeatable read, read only); "plain"
 * is a deferred transaction (SQLite takes no lock on the main database for temporary tables).
 */
export async function pinnedTransaction<T>(
  conn: Kysely<Database>,
  dialect: DialectName,
  mode: 'write' | 'snapshot' | 'plain',
  work: () => Promise<T>,
): Promise<T> {
  const begin =
    dialect === 'sqlite'
      ? mode === 'write'
        ? 'begin immediate'
        : 'begin'
      : mode === 'snapshot'
        ? 'begin isolation level repeatable read read only'
        : 'begin';
  await sql.raw(begin).execute(conn);
  try {
    const result = await work();
    await sql`commit`.execute(conn);
    return result;
  } catch (error) {
    await sql`rollback`.execute(conn).catch(() => undefined);
    throw error;
  }
}
