/**
 * Opens the store named by a database URL: builds the Kysely dialect, prepares the connection
 * (SQLite: WAL and a busy timeout; PostgreSQL: pool, time-outs, search_path), migrates.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { postgresBulkSession } from './bulk-session.js';
import { parseDatabaseUrl } from './database-url.js';
import { postgresDataVersion, sqliteDataVersion } from './data-version.js';
import { sqliteAuthCodeWriter } from './sqlite-auth-code.js';
import { sqliteRetention } from './sqlite-retention.js';
import { reuseStatements } from './statement-cache.js';
import type { SqlStoreOptions } from './sql-store.js';
import { migrate, MigrationError, requireUpToDate } from './migrations.js';
import { DatabaseAccessError } from '../errors/startup-errors.js';
import { postgresOpenError, sqliteOpenError } from './open-errors.js';
import { sqliteAccessProblem } from './sqlite-access.js';
import type { Database, DialectName } from './schema.js';
import { SqlStore } from './sql-store.js';
import { SqliteReaders } from './sqlite-readers.js';

export interface OpenStoreOptions {
  /** PostgreSQL connections in the pool (default 10). */
  readonly poolSize?: number;
  /** PostgreSQL: longest a statement may run (0: no limit). SQLite: longest a statement waits for a lock (default 5000). */
  readonly statementTimeoutMs?: number;
  /** PostgreSQL: longest wait for a new connection (default 10000), so a silent network fails requests instead of hanging them. */
  readonly connectTimeoutMs?: number;
  /** PostgreSQL application_name, shown in pg_stat_activity (default "sis"; an application_name in the URL wins). */
  readonly applicationName?: string;
  /** PostgreSQL schema to use, created if missing; wins over the URL's `?schema=`. */
  readonly schema?: string;
  /**
   * Errors of connections nobody is waiting on (the server restarted, a connection was killed). The
   * pool replaces those connections; this only reports them. Never thrown: they must not crash the process.
   */
  readonly onBackgroundError?: (error: Error) => void;
  /**
   * "apply" (default): create the database and apply missing migrations. "require": change nothing,
   * refuse a database that does not exist or is not at this program's schema version.
   */
  readonly migrations?: 'apply' | 'require';
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** SQLite: most streamed lists read at once, each on a read-only connection of its own. */
const SQLITE_SNAPSHOT_SLOTS = 4;

export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<SqlStore> {
  const target = parseDatabaseUrl(databaseUrl);
  const mode = options.migrations ?? 'apply';
  if (target.dialect === 'sqlite') {
    const need = mode === 'apply' ? 'write' : 'read';
    try {
      return await openSqlite(target.path, options, mode);
    } catch (error) {
      throw sqliteOpenError(error, target.path, need);
    }
  }

  const schema = options.schema ?? target.schema;
  const poolSize = options.poolSize ?? 10;
  // Loaded only for PostgreSQL: a SQLite process does not pay the driver's memory.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: poolSize,
    application_name: options.applicationName ?? 'sis',
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // Finds peers that vanished without closing (a failed-over host) on idle connections too.
    keepAlive: true,
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
  });
  const onError = options.onBackgroundError ?? (() => undefined);
  // A connection that dies emits 'error' on its client, idle or checked out. A checked-out client
  // has no pool listener, so without this one the error would be unhandled and end the process.
  // (The failed query itself rejects as usual; the pool drops the client when it is released.)
  pool.on('connect', (client) => client.on('error', onError));
  // The pool re-emits idle clients' errors, which the listener above has already reported.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool,
      // search_path may name a schema that does not exist yet; migrate creates it under its lock.
      onCreateConnection:
        schema === null ? undefined : async (conn) => void (await conn.executeQuery(setSearchPath(schema))),
    }),
  });
  // Half the pool at most serves streamed lists, so short requests always find connections.
  try {
    return await ready(db, 'postgres', schema ?? '', schema, mode, {
      snapshotSlots: Math.max(1, Math.floor(poolSize / 2)),
      dataVersion: postgresDataVersion(pool, schema),
      bulkSession: postgresBulkSession(pool, schema),
    });
  } catch (error) {
    throw postgresOpenError(error, target.connectionString);
  }
}

async function openSqlite(path: string, options: OpenStoreOptions, mode: 'apply' | 'require'): Promise<SqlStore> {
  const memory = path === ':memory:';
  if (!memory && mode === 'require' && !existsSync(path)) {
    throw new MigrationError(`the database file ${path} does not exist; run \`sis migrate\` (or start the service) first`);
  }
  if (!memory && mode === 'apply') {
    // SQLite opens a file it cannot write read-only, without a word: say so now, not at the first write.
    const problem = sqliteAccessProblem(path, 'write');
    if (problem !== null) throw new DatabaseAccessError(problem);
  }
  if (!memory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const busyTimeout = options.statementTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const database = new BetterSqlite3(path, { timeout: busyTimeout });
  try {
    // Readers (the service) do not block the writer (an import) and the other way round.
    if (!memory) database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    // Removed and erased rows (codes, phones) are overwritten with zeros, not left in free space.
    database.pragma('secure_delete = ON');
  } catch (error) {
    database.close();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: reuseStatements(database) }) });
  // Reads go straight to the (reused) prepared statement: no driver queue or promise hop.
  const directRead = (source: string, parameters: readonly unknown[], arrays = false): unknown[] =>
    database.prepare(source).raw(arrays).all(parameters);
  // Snapshot reads (streamed lists) need connections of their own; an in-memory database has none.
  const readers = memory ? undefined : new SqliteReaders(path, { keep: SQLITE_SNAPSHOT_SLOTS, timeoutMs: busyTimeout });
  return ready(db, 'sqlite', '', null, mode, {
    directRead,
    dataVersion: sqliteDataVersion(directRead),
    // Prepared only once the tables exist (after migrating).
    directAuthCode: () => sqliteAuthCodeWriter(database),
    directRetention: () => sqliteRetention(database),
    snapshotSlots: SQLITE_SNAPSHOT_SLOTS,
    ...(readers ? { readers } : {}),
  });
}

function setSearchPath(schema: string): CompiledQuery {
  return CompiledQuery.raw(`set search_path to "${schema.replace(/"/g, '""')}"`);
}

async function ready(
  db: Kysely<Database>,
  dialect: DialectName,
  lockScope: string,
  schema: string | null,
  mode: 'apply' | 'require',
  reads: Pick<SqlStoreOptions, 'directRead' | 'readers' | 'snapshotSlots' | 'dataVersion' | 'bulkSession'> & {
    readonly directAuthCode?: () => NonNullable<SqlStoreOptions['directAuthCode']>;
    readonly directRetention?: () => NonNullable<SqlStoreOptions['directRetention']>;
  },
): Promise<SqlStore> {
  try {
    const applied = mode === 'apply' ? await migrate(db, { dialect, schema }) : (await requireUpToDate(db), []);
    const { directAuthCode, directRetention, ...rest } = reads;
    return new SqlStore(db, {
      dialect,
      lockScope,
      migrationsApplied: applied,
      ...rest,
      ...(directAuthCode ? { directAuthCode: directAuthCode() } : {}),
      ...(directRetention ? { directRetention: directRetention() } : {}),
    });
  } catch (error) {
    reads.readers?.close();
    await db.destroy();
    throw error;
  }
}
