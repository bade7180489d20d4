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

/** First half of the two-key advisory lock: "SIS" plus 1, unlikely to collide with other applications. */
const LOCK_CLASS = 0x53495301;
