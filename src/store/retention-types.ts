/**
 * What the store offers for retention: removing old rows in small batches, erasing delivered texts
 * left from before they were erased at delivery, and counting. The pruner (src/retention/pruner.ts)
 * decides when and how much; the store only guarantees each batch is short and safe to run from
 * several processes at once.
 */
export type RetentionTable = 'auth_codes' | 'outbox';

export const RETENTION_TABLES: readonly RetentionTable[] = ['auth_codes', 'outbox'];

export interface TableCounts {
  /** Rows in the table now. */
  readonly kept: number;
  /** Rows pruned so far, by every process (counted in the transaction that removed them). */
  readonly pruned: number;
}

export interface RetentionStore {
  /**
   * Removes up to `limit` of the oldest rows of `table` created before `before` (outbox: delivered
   * and failed messages only, never pending ones) and adds them to the table's pruned count, in
   * one short transaction; returns how many. Rows another process is pruning are skipped, not
   * waited for (PostgreSQL: SKIP LOCKED; SQLite has one writer at a time).
   */
  pruneBatch(table: RetentionTable, before: Date, limit: number): Promise<number>;
  /** How many rows `pruneBatch` would remove, all batches together (a dry run). */
  countPrunable(table: RetentionTable, before: Date): Promise<number>;
  /**
   * Erases the code and text of up to `limit` delivered messages that still hold them (stored
   * before texts were erased at delivery) and masks their phone; returns how many.
   */
  eraseDelivered(limit: number): Promise<number>;
  /** How many delivered messages still hold their text. */
  countUnerased(): Promise<number>;
  retentionCounts(): Promise<Readonly<Record<RetentionTable, TableCounts>>>;
  /**
   * SQLite: copies the write-ahead log into the database file and empties it, only if that needs
   * no wait (no other writer, no reader on an older state), so that erased and removed bytes leave
   * the files on disk. True when done or nothing to do (PostgreSQL); false when it must wait for a
   * later try.
   */
  compactLog(): Promise<boolean>;
}

/**
 * A dialect's way of running retention's batches (the opener gives it to the store): SQLite's
 * synchronous transactions on its one writer (sqlite/sqlite-retention.ts), PostgreSQL's single statements
 * over SKIP LOCKED rows (postgres/postgres-retention.ts). `before` is an ISO 8601 time.
 */
export interface RetentionBatches {
  prune(table: RetentionTable, before: string, limit: number): Promise<number>;
  erase(limit: number): Promise<number>;
  compactLog(): Promise<boolean>;
}
