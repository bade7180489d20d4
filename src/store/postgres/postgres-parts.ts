/**
 * PostgreSQL's parts of the store (sql/engine-parts.ts): reads on the pool, tried again once on a
 * connection that died; the data version a trigger moves; COPY sessions, snapshots and retention
 * batches on pooled connections. AuthCode has no quick way here: the shared transaction runs.
 */
import { CompiledQuery, sql } from 'kysely';
import type { Kysely } from 'kysely';
import { isConnectionLost } from '../db-errors.js';
import type { Database } from '../schema/tables.js';
import type { EngineParts, EngineReads } from '../sql/engine-parts.js';
import { postgresBulkSession } from './postgres-bulk-session.js';
import { postgresDataVersion } from './postgres-data-version.js';
import type { ArrayQueries } from './postgres-data-version.js';
import { postgres } from './postgres-dialect.js';
import type { ConnectionSource } from './postgres-hosts.js';
import { postgresRetention } from './postgres-retention.js';
import { postgresSnapshot } from './postgres-snapshot.js';

export interface PostgresConnections {
  readonly pool: ConnectionSource;
  /** The pool's one-query calls for the hot path (under its deadlines when the service set them). */
  readonly queries: ArrayQueries;
  /** Kysely over `pool` (under its deadlines). */
  readonly db: Kysely<Database>;
  /** The schema the store lives in (search_path); null: whatever search_path names. */
  readonly schema: string | null;
  readonly poolSize: number;
}

export function postgresParts(connections: PostgresConnections, migrationsApplied: readonly number[]): EngineParts {
  const { pool, queries, db, schema, poolSize } = connections;
  return {
    db,
    dialect: postgres,
    lockScope: schema ?? '',
    migrationsApplied,
    reads: pooledReads(db),
    authCode: () => null,
    dataVersion: postgresDataVersion(queries, schema),
    retention: postgresRetention(db),
    bulkSession: postgresBulkSession(pool),
    snapshots: {
      open: () => postgresSnapshot(db),
      // Half the pool at most serves streamed lists, so short requests always find connections.
      slots: Math.max(1, Math.floor(poolSize / 2)),
      connections: () => 0,
    },
    async serverClock() {
      const { rows } = await sql<{
        ms: number;
      }>`select extract(epoch from clock_timestamp())::float8 * 1000 as ms`.execute(db);
      return Number(rows[0]!.ms);
    },
    close: () => db.destroy(),
  };
}

/**
 * A read, tried once more on another connection when its connection turns out to have died
 * (the pool drops it): a restarted server or a killed connection then costs no failed request.
 * Writes are not retried: whether a lost one was committed cannot be known.
 */
function pooledReads(db: Kysely<Database>): EngineReads {
  const read = async <R>(query: CompiledQuery): Promise<R[]> => {
    try {
      return (await db.executeQuery<R>(query)).rows;
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      return (await db.executeQuery<R>(query)).rows;
    }
  };
  return {
    rows: <R>(source: string, parameters: readonly unknown[]) => read<R>(CompiledQuery.raw(source, [...parameters])),
    async value(source, parameters) {
      const [row] = await read<Record<string, unknown>>(CompiledQuery.raw(source, [...parameters]));
      return row === undefined ? undefined : Object.values(row)[0];
    },
    async arrays(query) {
      const rows = await read<Record<string, unknown>>(query);
      return rows.map((row) => Object.values(row));
    },
  };
}
