/**
 * What differs between SQLite and PostgreSQL, behind one interface, as Kysely does it: each dialect
 * is a module of its own engine's folder (sqlite/sqlite-dialect.ts, postgres/postgres-dialect.ts),
 * chosen once by the database URL (open/open-store.ts) and passed down. Callers ask what their
 * dialect does, never which one it is.
 */
import type { ColumnDefinitionBuilder, Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from './tables.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * A transaction on a connection the caller holds (pinnedTransaction): "write" takes the write lock
 * up front, "snapshot" reads one consistent state, "plain" is a transaction like any other.
 */
export type TransactionMode = 'write' | 'snapshot' | 'plain';

export interface Dialect {
  /** For messages and logs only: code asks the members below, never the name. */
  readonly name: DialectName;

  /**
   * A server reached over the network, which may not be up yet when the service starts: the
   * service then starts without it and keeps trying (open/background-store.ts). A SQLite file opens
   * at once or never will, so it is opened before listening.
   */
  readonly isServer: boolean;
  /** Connections come from a pool of SIS_DATABASE_POOL_SIZE (its size is a metric); SQLite has one connection. */
  readonly pooled: boolean;
  /**
   * The statement time-out bounds how long a statement runs (PostgreSQL's statement_timeout), so
   * bulk commands lift it; on SQLite it bounds the wait for a lock, which bulk commands keep.
   */
  readonly statementTimeoutLimitsRuns: boolean;

  /** Column types and schema objects that are spelt differently (migrations.ts). */
  readonly ddl: DialectDdl;

  /**
   * `work` in one write transaction. SQLite starts it IMMEDIATE: taking the write lock up front
   * means two processes queue on the busy timeout instead of one failing at once when both try
   * to upgrade a read lock. PostgreSQL's plain transaction locks rows as it writes them.
   */
  writeTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * Serialises the writers of `purpose` until the transaction ends. PostgreSQL: an advisory lock
   * keyed with `scopeKey` (the schema), so isolated schemas do not wait on each other. SQLite:
   * nothing, its IMMEDIATE transaction already holds the only write lock.
   */
  lockForWrite(trx: Kysely<Database>, purpose: string, scopeKey: string): Promise<void>;
  /** `lockForWrite`'s statement as SQL text (`?` placeholders) and parameters, for sessions outside Kysely; null when there is none. */
  writeLockStatement(purpose: string, scopeKey: string): [string, unknown[]] | null;
  /** The statement that begins a transaction of `mode` on a pinned connection. */
  begin(mode: TransactionMode): string;

  /**
   * Rows another instance is claiming right now are skipped, not waited for (PostgreSQL's
   * FOR UPDATE SKIP LOCKED). SQLite has one writer at a time: nothing to skip, the query as it is.
   */
  skipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /**
   * The clause that makes text compare byte by byte: SQLite's default already does; PostgreSQL's
   * depends on the database's collation, so it is named (and served by an index of migration 2).
   */
  readonly byteOrder: string;

  /** How a bulk import stages its rows (bulk-import.ts, bulk-session.ts). */
  readonly staging: DialectStaging;
}

export interface DialectDdl {
  /** A 64-bit integer: SQLite's integer already is one (and `integer primary key` is the rowid). */
  readonly bigint: 'bigint' | 'integer';
  /** A point in time: SQLite stores ISO 8601 text (which sorts in time order); PostgreSQL has timestamptz. */
  readonly timestamp: 'timestamptz' | 'text';
  /** A primary key the database numbers: SQLite's autoincrement, PostgreSQL's identity. */
  generatedKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /** Creates the schema to migrate into, if named (PostgreSQL; a SQLite file is its own). Runs under the migration lock. */
  createSchema(trx: Kysely<Database>, schema: string | null): Promise<void>;
  /** An index on `column` in byte order, where ordinary indexes follow a collation (PostgreSQL); SQLite's already are. */
  createByteOrderIndex(db: Kysely<Database>, index: string, table: string, column: string): Promise<void>;
  /**
   * The students table's data version, moved by a trigger (PostgreSQL). SQLite tells it for free
   * (sqlite/sqlite-data-version.ts) and has only row-level triggers: a million-row import would
   * write it a million times.
   */
  createDataVersion(db: Kysely<Database>): Promise<void>;
  /**
   * Migration 12: a code's transaction commits only before the deadline its connection set
   * (`sis.commit_by`, postgres/postgres-deadlines.ts), checked at COMMIT. SQLite: nothing (a local
   * file has no partition: its COMMIT is never delivered late).
   */
  createCommitDeadline(db: Kysely<Database>): Promise<void>;
  /**
   * Migration 13: the same check against a duration from the transaction's start
   * (`sis.commit_within`), measured on the server's own clock alone. SQLite: nothing.
   */
  commitDeadlineOnServerClock(db: Kysely<Database>): Promise<void>;
}

export interface DialectStaging {
  /** The schema temporary tables are named with, so they are never mistaken for a table of the database's. */
  readonly tempSchema: string;
  /** The staging tables' row-order column: SQLite's rowid alias keeps the rows in order at no cost. */
  readonly ordColumn: string;
  /**
   * The merge itself fails on a key staged twice (PostgreSQL: a unique violation, or a row affected
   * twice by an upsert), so duplicates need looking for only when it does; SQLite's upsert would
   * take the second row silently, so there they are looked for first.
   */
  readonly mergeRefusesDuplicates: boolean;
  /** SQL written with `?` placeholders in the driver's own (PostgreSQL: `$n`). No bulk statement contains a literal question mark. */
  placeholders(text: string): string;
}
