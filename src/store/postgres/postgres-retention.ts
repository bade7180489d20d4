/**
 * Retention's batches on PostgreSQL. A batch is one statement: the rows are chosen and locked with
 * SKIP LOCKED (rows another instance is pruning are left to it, never waited for), removed, and
 * counted in pruned_rows (in a slot of the connection's own), all committed together.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { MASKED_PHONE_SQL } from '../phone-mask.js';
import type { RetentionBatches } from '../retention-types.js';
import type { Database } from '../schema/tables.js';
import { PRUNABLE, UNERASED } from '../sql/sql-retention.js';

/** Counter rows per table: two connections rarely share one, so pruners seldom wait on each other's count. */
const COUNTER_SLOTS = 16;

export function postgresRetention(db: Kysely<Database>): RetentionBatches {
  return {
    async prune(table, at, limit) {
      const t = sql.table(table);
      const { rows } = await sql<{ n: string | number }>`
      with gone as (
        delete from ${t} where id in (
          select id from ${t} where ${PRUNABLE[table]} and created_at < ${at}
          order by created_at limit ${limit} for update skip locked
        ) and ${PRUNABLE[table]}
        returning id
      ), counted as (
        insert into pruned_rows (table_name, slot, pruned)
        select ${table}, pg_backend_pid() % ${COUNTER_SLOTS}, count(*) from gone having count(*) > 0
        on conflict (table_name, slot) do update set pruned = pruned_rows.pruned + excluded.pruned
      )
      select count(*) as n from gone`.execute(db);
      return Number(rows[0]?.n ?? 0);
    },
    async erase(limit) {
      const { numAffectedRows } = await sql`
      update outbox set code = '', message = '', phone = ${sql.raw(MASKED_PHONE_SQL)}
      where id in (select id from outbox where ${UNERASED} limit ${limit} for update skip locked) and ${UNERASED}`.execute(
        db,
      );
      return Number(numAffectedRows ?? 0);
    },
    // Nothing to compact: the log to empty is SQLite's (RetentionStore.compactLog).
    compactLog: async () => true,
  };
}
