/**
 * Opens the store named by a database URL: builds the Kysely dialect, prepares the connection
 * (SQLite: WAL and a busy timeout; PostgreSQL: pool, statement timeout, search_path), migrates.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { parseDatabaseUrl } from './database-url.js';
import { migrate } from './migrations.js';
import type { Database } from './schema.js';
import { SqlStore } from './sql-store.js';
import type { Store } from './store.js';

export interface OpenStoreOptions {
  /** PostgreSQL connections in the pool (default 10). */
  readonly poolSize?: number;
  /** PostgreSQL: longest a statement may run. SQLite: longest a statement waits for a lock (default 5000). */
  readonly statementTimeoutMs?: number;
  /** PostgreSQL schema to use, created if missing; wins over the URL's `?schema=`. */
  readonly schema?: string;
  /** Errors of idle pooled connections (e.g. the server restarted); the pool replaces them. */
  readonly onBackgroundError?: (error: Error) => void;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<Store> {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.dialect === 'sqlite') {
    const memory = target.path === ':memory:';
    if (!memory) mkdirSync(dirname(resolve(target.path)), { recursive: true });
    const database = new BetterSqlite3(target.path, { timeout: options.statementTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    try {
      // Readers (the service) do not block the writer (an import) and the other way round.
      if (!memory) database.pragma('journal_mode = WAL');
      database.pragma('synchronous = NORMAL');
    } catch (error) {
      database.close();
      throw error;
    }
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    return ready(db, new SqlStore(db, { dialect: 'sqlite', lockScope: '' }), null);
  }

  const schema = options.schema ?? target.schema;
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.poolSize ?? 10,
    application_name: 'sis',
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
  });
  const onError = options.onBackgroundError ?? (() => undefined);
  // Without a listener an idle client's error would crash the process.
  pool.on('error', onError);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool,
      // search_path may name a schema that does not exist yet; migrate creates it under its lock.
      onCreateConnection:
        schema === null ? undefined : async (conn) => void (await conn.executeQuery(setSearchPath(schema))),
    }),
  });
  return ready(db, new SqlStore(db, { dialect: 'postgres', lockScope: schema ?? '' }), schema);
}

function setSearchPath(schema: string): CompiledQuery {
  return CompiledQuery.raw(`set search_path to "${schema.replace(/"/g, '""')}"`);
}

async function ready(db: Kysely<Database>, store: SqlStore, schema: string | null): Promise<SqlStore> {
  try {
    await migrate(db, { dialect: store.dialect, schema });
    return store;
  } catch (error) {
    await store.close();
    throw error;
  }
}
