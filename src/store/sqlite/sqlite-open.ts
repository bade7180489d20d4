/**
 * Opening a SQLite file (or `:memory:`): WAL and a busy timeout on the one connection, reads straight
 * on its prepared statements, read-only connections for snapshot reads, then migrations. And
 * looking at one for `sis check` without changing it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { DatabaseAccessError } from '../../errors/startup-errors.js';
import type { OpenStoreOptions } from '../open-options.js';
import { createPrivateFile } from '../private-file.js';
import type { DatabaseInspection } from '../schema/migrations.js';
import { MigrationError, schemaStatus } from '../schema/migrations.js';
import type { Database } from '../schema/tables.js';
import { readyStore } from '../sql/ready-store.js';
import type { SqlStore } from '../sql/sql-store.js';
import { sqliteAccessProblem } from './sqlite-access.js';
import { sqlite } from './sqlite-dialect.js';
import { SqliteConnection } from './sqlite-driver.js';
import { sqliteOpenError } from './sqlite-open-error.js';
import { closeSqlite, SNAPSHOT_SLOTS, sqliteParts } from './sqlite-parts.js';
import type { SqliteConnections } from './sqlite-parts.js';
import { SqliteReaders } from './sqlite-readers.js';

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export async function openSqlite(path: string | ':memory:', options: OpenStoreOptions): Promise<SqlStore> {
  const mode = options.migrations ?? 'apply';
  try {
    return await open(path, options);
  } catch (error) {
    throw sqliteOpenError(error, path, mode === 'apply' ? 'write' : 'read');
  }
}

async function open(path: string, options: OpenStoreOptions): Promise<SqlStore> {
  const mode = options.migrations ?? 'apply';
  const memory = path === ':memory:';
  if (!memory && mode === 'require' && !existsSync(path)) {
    throw new MigrationError(
      `the database file ${path} does not exist; run \`sis migrate\` (or start the service) first`,
    );
  }
  if (!memory && mode === 'apply') {
    // SQLite opens a file it cannot write read-only, without a word: say so now, not at the first write.
    const problem = sqliteAccessProblem(path, 'write');
    if (problem !== null) throw new DatabaseAccessError(problem);
  }
  if (!memory) {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    // Created 0600 before SQLite opens it (SQLite would make it 0644 less the umask); its -wal
    // and -shm files take its mode.
    createPrivateFile(path);
  }
  const busyTimeout = options.statementTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const database = new SqliteConnection(path, { timeoutMs: busyTimeout });
  try {
    // Readers (the service) do not block the writer (an import) and the other way round.
    if (!memory) database.exec('pragma journal_mode = WAL');
    database.exec('pragma synchronous = NORMAL');
    // Removed and erased rows (codes, phones) are overwritten with zeros, not left in free space.
    database.exec('pragma secure_delete = ON');
  } catch (error) {
    database.close();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  // Snapshot reads (streamed lists) need connections of their own; an in-memory database has none.
  const readers = memory ? null : new SqliteReaders(path, { keep: SNAPSHOT_SLOTS, timeoutMs: busyTimeout });
  const connections: SqliteConnections = { database, db, readers };
  return readyStore({ db, dialect: sqlite, schema: null, close: closeSqlite(connections) }, mode, (applied) =>
    // Prepared only once the tables exist (after migrating).
    sqliteParts(connections, applied),
  );
}

/**
 * Through a connection that may only read (query_only), after checking the service's user could
 * write the file and its directory.
 */
export async function inspectSqlite(path: string | ':memory:'): Promise<DatabaseInspection> {
  if (path === ':memory:') return { state: 'memory' };
  const file = resolve(path);
  const problem = sqliteAccessProblem(file, 'write');
  if (problem !== null) throw new DatabaseAccessError(problem);
  if (!existsSync(file)) return { state: 'missing', path: file };
  let database: SqliteConnection | null = null;
  try {
    // A read-write connection that may only read: a read-only one would leave the -wal and -shm
    // files behind, owned by whoever ran the check (root?), and the service's user could not use them.
    database = new SqliteConnection(file, { timeoutMs: 2000 });
    database.exec('pragma query_only = ON');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    return { ...(await schemaStatus(db)), where: file };
  } catch (error) {
    throw sqliteOpenError(error, file, 'write');
  } finally {
    database?.close();
  }
}
