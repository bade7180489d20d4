/**
 * Retention over the store: the batches are the dialect's (RetentionBatches, given by the opener:
 * SQLite's in sqlite/sqlite-retention.ts, run synchronously; PostgreSQL's in postgres/postgres-retention.ts),
 * the counts the same SQL for both.
 */
import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import type { RetentionBatches, RetentionStore, RetentionTable, TableCounts } from '../retention-types.js';
import { RETENTION_TABLES } from '../retention-types.js';
import type { Database } from '../schema/tables.js';

/** Which rows of a table may go: pending messages never do. The predicates match migration 5's indexes. */
export const PRUNABLE: Readonly<Record<RetentionTable, RawBuilder<unknown>>> = {
  auth_codes: sql`true`,
  outbox: sql`state <> 'pending'`,
};

export const UNERASED = sql`state = 'delivered' and message <> ''`;

export class SqlRetention implements RetentionStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly batches: RetentionBatches,
  ) {}

  async pruneBatch(table: RetentionTable, before: Date, limit: number): Promise<number> {
    return this.batches.prune(table, before.toISOString(), limit);
  }

  async countPrunable(table: RetentionTable, before: Date): Promise<number> {
    const t = sql.table(table);
    const { rows } = await sql<{
      n: string | number;
    }>`select count(*) as n from ${t} where ${PRUNABLE[table]} and created_at < ${before.toISOString()}`.execute(
      this.db,
    );
    return Number(rows[0]?.n ?? 0);
  }

  async eraseDelivered(limit: number): Promise<number> {
    return this.batches.erase(limit);
  }

  async countUnerased(): Promise<number> {
    const { rows } = await sql<{ n: string | number }>`select count(*) as n from outbox where ${UNERASED}`.execute(
      this.db,
    );
    return Number(rows[0]?.n ?? 0);
  }

  async retentionCounts(): Promise<Readonly<Record<RetentionTable, TableCounts>>> {
    const pruned = await this.db
      .selectFrom('pruned_rows')
      .select((eb) => ['table_name', eb.fn.sum<string | number>('pruned').as('pruned')])
      .groupBy('table_name')
      .execute();
    const counts = {} as Record<RetentionTable, TableCounts>;
    for (const table of RETENTION_TABLES) {
      const { rows } = await sql<{ n: string | number }>`select count(*) as n from ${sql.table(table)}`.execute(
        this.db,
      );
      counts[table] = {
        kept: Number(rows[0]?.n ?? 0),
        pruned: Number(pruned.find((r) => r.table_name === table)?.pruned ?? 0),
      };
    }
    return counts;
  }

  async compactLog(): Promise<boolean> {
    return this.batches.compactLog();
  }
}
