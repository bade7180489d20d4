/**
 * Opening a PostgreSQL database: a pool (time-outs, keep-alive, search_path for a schema, the
 * service's deadlines and breaker: postgres-deadlines.ts), data
 * version, COPY session, snapshots and retention batches on it, then migrations. And looking at
 * one for `sis check` in read-only transactions.
 */
import { Kysely, PostgresDialect } from 'kysely';
import type { QueryArrayConfig } from 'pg';
import type { OpenStoreOptions } from '../open-options.js';
import type { DatabaseInspection } from '../schema/migrations.js';
import { schemaStatus } from '../schema/migrations.js';
import type { Database } from '../schema/tables.js';
import { readyStore } from '../sql/ready-store.js';
import type { SqlStore } from '../sql/sql-store.js';
import { DeadlinePool } from './postgres-deadlines.js';
import { postgres } from './postgres-dialect.js';
import { postgresOpenError, postgresTarget } from './postgres-open-error.js';
import { postgresParts } from './postgres-parts.js';

/** Where a PostgreSQL URL points: the connection string without `?schema=`, and that schema. */
export interface PostgresLocation {
  readonly connectionString: string;
  readonly schema: string | null;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export async function openPostgres(target: PostgresLocation, options: OpenStoreOptions): Promise<SqlStore> {
  const schema = options.schema ?? target.schema;
  const poolSize = options.poolSize ?? 10;
  const queryTimeoutMs = options.queryTimeoutMs ?? 0;
  // Loaded only for PostgreSQL: a SQLite process does not pay the driver's memory.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: poolSize,
    application_name: options.applicationName ?? 'sis',
    // A new connection, and a free one of a full pool: both wait at most this long.
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // Finds peers that vanished without closing (a failed-over host) on idle connections too.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...startupOptions(schema, []),
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
  });
  const onError = options.onBackgroundError ?? (() => undefined);
  // A connection that dies emits 'error' on its client, idle or checked out. A checked-out client
  // has no pool listener, so without this one the error would be unhandled and end the process.
  // (The failed query itself rejects as usual; the pool drops the client when it is released.)
  pool.on('connect', (client) => client.on('error', onError));
  // The pool re-emits idle clients' errors, which the listener above has already reported.
  pool.on('error', () => undefined);
  const guarded =
    queryTimeoutMs > 0
      ? new DeadlinePool(pool, {
          queryTimeoutMs,
          maxWaiting: options.maxWaiting ?? 100,
          ...(options.queryTimeoutSetting === undefined ? {} : { setting: options.queryTimeoutSetting }),
        })
      : null;
  const plain = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const db = guarded === null ? plain : new Kysely<Database>({ dialect: new PostgresDialect({ pool: guarded }) });
  const queries = guarded ?? { queryArray: <R extends unknown[]>(config: QueryArrayConfig) => pool.query<R>(config) };
  try {
    // Migrations run without the deadlines: an index built on a large table, or the wait for
    // another instance's migration lock, may take longer than any request should. (Either Kysely
    // ends the one pool when destroyed: `db` is.)
    const opened = { db: plain, dialect: postgres, schema, close: () => db.destroy() };
    return await readyStore(opened, options.migrations ?? 'apply', (applied) =>
      postgresParts({ pool, queries, db, schema, poolSize }, applied),
    );
  } catch (error) {
    throw postgresOpenError(error, target.connectionString);
  }
}

/**
 * The schema as a startup parameter of each connection, not a `set search_path` after it opens:
 * no round trip, and nothing between connect and first use that can fail (Kysely's
 * onCreateConnection hook leaks the pool client when its query fails, as a connection cut just
 * then does: pool.end() then waits forever). search_path may name a schema that does not exist
 * yet; migrate creates it under its lock.
 */
function startupOptions(schema: string | null, more: readonly string[]): { options?: string } {
  const settings = [...more];
  // In `options`, a backslash escapes the next character (a space would split the value).
  if (schema !== null) settings.push(`-c search_path=${`"${schema.replace(/"/g, '""')}"`.replace(/[\\ ]/g, '\\$&')}`);
  return settings.length === 0 ? {} : { options: settings.join(' ') };
}

/** On one connection whose every transaction is read-only. */
export async function inspectPostgres(target: PostgresLocation, connectTimeoutMs: number): Promise<DatabaseInspection> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: 1,
    application_name: 'sis-check',
    connectionTimeoutMillis: connectTimeoutMs,
    // Whatever this connection runs cannot write.
    ...startupOptions(target.schema, ['-c default_transaction_read_only=on']),
  });
  pool.on('error', () => undefined);
  const schema = target.schema;
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    const { where, database } = postgresTarget(target.connectionString);
    return {
      ...(await schemaStatus(db)),
      where: `${where}/${database}${schema === null ? '' : ` (schema ${schema})`}`,
    };
  } catch (error) {
    throw postgresOpenError(error, target.connectionString);
  } finally {
    await db.destroy();
  }
}
