/**
 * Opening a PostgreSQL database: a pool (time-outs, keep-alive, search_path for a schema, the
 * service's deadlines and breaker: postgres-deadlines.ts), data
 * version, COPY session, snapshots and retention batches on it, then migrations. And looking at
 * one for `sis check` in read-only transactions.
 */
import { Kysely, PostgresDialect } from 'kysely';
import type { OpenStoreOptions } from '../open-options.js';
import type { DatabaseInspection } from '../schema/migrations.js';
import { schemaStatus } from '../schema/migrations.js';
import type { Database } from '../schema/tables.js';
import { readyStore } from '../sql/ready-store.js';
import type { SqlStore } from '../sql/sql-store.js';
import { DeadlinePool } from './postgres-deadlines.js';
import { postgres } from './postgres-dialect.js';
import { HostPool } from './postgres-hosts.js';
import type { PostgresHost, SessionAttrs } from './postgres-hosts.js';
import { postgresOpenError, postgresTarget } from './postgres-open-error.js';
import { postgresParts } from './postgres-parts.js';

/** Where a PostgreSQL URL points (open/database-url.ts): its hosts, schema and session attributes. */
export interface PostgresLocation {
  readonly connectionString: string;
  readonly schema: string | null;
  readonly hosts: readonly PostgresHost[];
  /** Null: the URL names none; the store then asks for a writable server (libpq's read-write), `sis check` for any. */
  readonly sessionAttrs: SessionAttrs | null;
  readonly loadBalance: boolean;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export async function openPostgres(target: PostgresLocation, options: OpenStoreOptions): Promise<SqlStore> {
  const schema = options.schema ?? target.schema;
  const poolSize = options.poolSize ?? 10;
  const queryTimeoutMs = options.queryTimeoutMs ?? 0;
  // Loaded only for PostgreSQL: a SQLite process does not pay the driver's memory.
  const { default: pg } = await import('pg');
  const onError = options.onBackgroundError ?? (() => undefined);
  const pool = new HostPool(
    pg,
    target.hosts,
    {
      // A store writes: a standby reached through an address that has not moved yet is not pooled.
      sessionAttrs: target.sessionAttrs ?? 'read-write',
      loadBalance: target.loadBalance,
      onBackgroundError: onError,
    },
    {
      max: poolSize,
      application_name: options.applicationName ?? 'sis',
      // A new connection (every host tried within it), and a free one of a full pool: both wait at most this long.
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      // Finds peers that vanished without closing (a failed-over host) on idle connections too.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...startupOptions(schema, []),
      ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
    },
  );
  const guarded =
    queryTimeoutMs > 0
      ? new DeadlinePool(pool, {
          queryTimeoutMs,
          maxWaiting: options.maxWaiting ?? 100,
          ...(options.onWritableAgain === undefined ? {} : { onWritableAgain: options.onWritableAgain }),
          ...(options.queryTimeoutSetting === undefined ? {} : { setting: options.queryTimeoutSetting }),
        })
      : null;
  const plain = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const db = guarded === null ? plain : new Kysely<Database>({ dialect: new PostgresDialect({ pool: guarded }) });
  const queries = guarded ?? { queryArray: pool.query.bind(pool) };
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

const LOOKING_ATTRS: Record<SessionAttrs, SessionAttrs> = {
  any: 'any',
  'read-write': 'primary',
  primary: 'primary',
  'read-only': 'standby',
  standby: 'standby',
  'prefer-standby': 'prefer-standby',
};

/** On one connection whose every transaction is read-only. */
export async function inspectPostgres(target: PostgresLocation, connectTimeoutMs: number): Promise<DatabaseInspection> {
  const { default: pg } = await import('pg');
  const pool = new HostPool(
    pg,
    target.hosts,
    {
      // Looking needs no primary: a standby answers as well, unless the URL asks for one. This
      // connection makes itself read-only, so read-write and read-only are judged by recovery alone.
      sessionAttrs: LOOKING_ATTRS[target.sessionAttrs ?? 'any'],
      loadBalance: target.loadBalance,
      onBackgroundError: () => undefined,
    },
    {
      max: 1,
      application_name: 'sis-check',
      connectionTimeoutMillis: connectTimeoutMs,
      // Whatever this connection runs cannot write.
      ...startupOptions(target.schema, ['-c default_transaction_read_only=on']),
    },
  );
  const schema = target.schema;
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    const { database } = postgresTarget(target.connectionString);
    const where = pool.where;
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
