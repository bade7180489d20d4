/**
 * What an engine (sqlite/, postgres/) hands the store once its database is open and migrated, as a
 * Kysely dialect hands out its driver and adapter: one object, every part present, each done the
 * engine's way. The shared SQL (SqlStore) uses them without asking which engine, or which parts, it got.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type { WithBulkSession } from '../import/bulk-session.js';
import type { RetentionBatches } from '../retention-types.js';
import type { Dialect } from '../schema/dialect.js';
import type { Database } from '../schema/tables.js';
import type { AuthCodeOutcome, AuthCodeRequest } from '../store.js';

export interface EngineParts {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Keys the PostgreSQL advisory locks, so isolated schemas do not wait on each other. */
  readonly lockScope: string;
  /** The migration versions opening the store applied (none when the database was up to date). */
  readonly migrationsApplied: readonly number[];
  /** The hot path's reads, compiled once by the store. */
  readonly reads: EngineReads;
  /** AuthCode's write done the engine's quick way, when it has one (sqlite-auth-code.ts). */
  readonly authCode: DirectAuthCode;
  /** How the store tells its data version (Store.dataVersion). */
  readonly dataVersion: DataVersionReader;
  /** How retention's batches run (sqlite-retention.ts, postgres-retention.ts). */
  readonly retention: RetentionBatches;
  /** The session bulk imports run on (PostgreSQL: a pool client of their own, with COPY). */
  readonly bulkSession: WithBulkSession;
  /** Reads of one consistent state, for streamed lists. */
  readonly snapshots: EngineSnapshots;
  /** The database server's clock now (ms since the epoch), or null: the database is this host's (SQLite). */
  serverClock(): Promise<number | null>;
  /** Closes what the engine opened: its connections, pool or files. */
  close(): Promise<void>;
}

export interface EngineReads {
  /**
   * A read on the shared connection (SQLite: synchronously on its prepared statement, bypassing
   * Kysely's connection queue, answered at once and thrown at once) or the pool (PostgreSQL: tried once more on another connection when
   * its connection turns out to have died).
   */
  rows<R>(sql: string, parameters: readonly unknown[]): R[] | Promise<R[]>;
  /**
   * The first column of the first row, or undefined when there is no row: a lookup by key
   * (SQLite: `pluck().get()`, no row object or array built; measured cheaper than `all`, bench/RESULTS.md).
   */
  value(sql: string, parameters: readonly unknown[]): unknown | Promise<unknown>;
  /** The same, rows as arrays in column order (SQLite builds those faster than objects). */
  arrays(query: CompiledQuery): Promise<ReadonlyArray<readonly unknown[]>>;
}

/**
 * A read of one consistent state of the database that lasts while its answer is sent: a large
 * list read page by page. It holds a connection of its own (SQLite: sqlite/sqlite-readers.ts;
 * PostgreSQL: a pooled connection in a REPEATABLE READ READ ONLY transaction, postgres/postgres-snapshot.ts),
 * so pages read later see the database as the first one did, whatever imports commit meanwhile.
 */
export interface SnapshotRead {
  /** The query's rows as arrays, in its column order. */
  rows(query: CompiledQuery): Promise<ReadonlyArray<readonly unknown[]>>;
  /** Ends the transaction and gives the connection back. Never throws; idempotent. */
  end(): Promise<void>;
}

export interface EngineSnapshots {
  /** Opens a read of one consistent state on a connection of its own; null where there is none (SQLite :memory:). */
  readonly open: (() => Promise<SnapshotRead>) | null;
  /** Most snapshot reads open at once; more wait their turn. */
  readonly slots: number;
  /** Connections of the engine's own that serve them, open now (SQLite's readers; 0 on a pool). */
  connections(): number;
}

/**
 * Returns the outcome, or null to have the store run the shared transaction (SqlAuthCode) instead:
 * always for an engine without a quick way, and for SQLite while its connection is inside a
 * transaction Kysely opened, so the write never lands inside someone else's transaction.
 */
export type DirectAuthCode = (request: AuthCodeRequest) => AuthCodeOutcome | null;

/** A token that moves whenever the students may have changed (Store.dataVersion). */
export type DataVersionReader = () => string | null | Promise<string | null>;
