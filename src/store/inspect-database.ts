/**
 * Looks at the database `sis check` is pointed at without changing it: SQLite through a connection
 * that may only read (query_only; after checking the service's user could write the file and its
 * directory), PostgreSQL in read-only transactions. Says where its schema stands; failures are the start-up errors the
 * service would meet (open-errors.ts), so the check and the start say the same thing.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { DatabaseAccessError } from '../errors/startup-errors.js';
import { parseDatabaseUrl } from './database-url.js';
import { schemaStatus } from './migrations.js';
import type { SchemaStatus } from './migrations.js';
import { postgresOpenError, postgresTarget, sqliteOpenError } from './open-errors.js';
import type { Database } from './schema.js';
import { sqliteAccessProblem } from './sqlite-access.js';

export type DatabaseInspection =
  | { readonly state: 'memory' }
  /** A SQLite file not made yet (the service makes it; its directory is writable). */
  | { readonly state: 'missing'; readonly path: string }
  | (SchemaStatus & { readonly where: string });

export async function inspectDatabase(url: string, connectTimeoutMs = 5000): Promise<DatabaseInspection> {
  const target = parseDatabaseUrl(url);
  if (target.dialect === 'sqlite') {
    if (target.path === ':memory:') return { state: 'memory' };
    const path = resolve(target.path);
    const problem = sqliteAccessProblem(path, 'write');
    if (problem !== null) throw new DatabaseAccessError(problem);
    if (!existsSync(path)) return { state: 'missing', path };
    let database: BetterSqlite3.Database | null = null;
    try {
      // A read-write connection that may only read: a read-only one would leave the -wal and -shm
      // files behind, owned by whoever ran the check (root?), and the service's user could not use them.
      database = new BetterSqlite3(path, { fileMustExist: true, timeout: 2000 });
      database.pragma('query_only = ON');
      const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
      return { ...(await schemaStatus(db)), where: path };
    } catch (error) {
      throw sqliteOpenError(error, path, 'write');
    } finally {
      database?.close();
    }
  }
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: 1,
    application_name: 'sis-check',
    connectionTimeoutMillis: connectTimeoutMs,
    // Whatever this connection runs cannot write.
    options: '-c default_transaction_read_only=on',
  });
  pool.on('error', () => undefined);
  const schema = target.schema;
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool,
      onCreateConnection:
        schema === null ? undefined : async (conn) => void (await conn.executeQuery(CompiledQuery.raw(`set search_path to "${schema.replace(/"/g, '""')}"`))),
    }),
  });
  try {
    const { where, database } = postgresTarget(target.connectionString);
    return { ...(await schemaStatus(db)), where: `${where}/${database}${schema === null ? '' : ` (schema ${schema})`}` };
  } catch (error) {
    throw postgresOpenError(error, target.connectionString);
  } finally {
    await db.destroy();
  }
}
