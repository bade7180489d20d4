/**
 * Retention over the store: PostgreSQL's batches here, SQLite's in sqlite-retention.ts (run
 * synchronously); counts for both. A PostgreSQL batch is one statement: the rows are chosen and
 * locked with SKIP LOCKED (rows another instance is pruning are left to it, never waited for),
 * removed, and counted in pruned_rows (in a slot of the connection's own), all committed together.
 */
import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import { MASKED_PHONE_SQL } from './phone-mask.js';
import type { RetentionStore, RetentionTable, TableCounts } from './retention-types.js';
import { RETENTION_TABLES } from './retention-types.js';
import type { Database, DialectName } from './schema.js';
import type { SqliteRetention } from './sqlite-retention.js';

/** Which rows of a table may go: pending messages never do. The predicates match migration 4's indexes. */
const PRUNABLE: Readonly<Record<RetentionTable, RawBuilder<unknown>>> = {
  auth_codes: sql`true`,
  outbox: sql`state <> 'pending'`,
};

const UNERASED = sql`state = 'delivered' and message <> ''`;

/** Counter rows per table on PostgreSQL: two connections rarely share one, so pruners seldom wait on each other's count. */
const COUNTER_SLOTS = 16;

/** While the SQLite connection is inside another transaction, a batch waits this long and tries again. */
const BUSY_RETRY_MS = 5;

export class SqlRetention implements RetentionStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly direct: SqliteRetention | undefined,
  ) {}

  async pruneBatch(table: RetentionTable, before: Date, limit: number): Promise<number> {
    const at = before.toISOString();
    if (this.direct !== undefined) return retryWhileBusy(() => this.direct!.prune(table, at, limit));
    if (this.dialect !== 'postgres') throw new Error('SQLite retention runs on its synchronous writer');
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
      select count(*) as n from gone`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  async countPrunable(table: RetentionTable, before: Date): Promise<number> {
    const t = sql.table(table);
    const { rows } = await sql<{ n: string | number }>`select count(*) as n from ${t} where ${PRUNABLE[table]} and created_at < ${before.toISOString()}`.execute(
      this.db,
    );
    return Number(rows[0]?.n ?? 0);
  }

  async eraseDelivered(limit: number): Promise<number> {
    if (this.direct !== undefined) return retryWhileBusy(() => this.direct!.erase(limit));
    const { numAffectedRows } = await sql`
      update outbox set code = '', message = '', phone = ${sql.raw(MASKED_PHONE_SQL)}
      where id in (select id from outbox where ${UNERASED} limit ${limit} for update skip locked) and ${UNERASED}`.execute(this.db);
    return Number(numAffectedRows ?? 0);
  }

  async countUnerased(): Promise<number> {
    const { rows } = await sql<{ n: string | number }>`select count(*) as n from outbox where ${UNERASED}`.execute(this.db);
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
      const { rows } = await sql<{ n: string | number }>`select count(*) as n from ${sql.table(table)}`.execute(this.db);
      counts[table] = { kept: Number(rows[0]?.n ?? 0), pruned: Number(pruned.find((r) => r.table_name === table)?.pruned ?? 0) };
    }
    return counts;
  }

  async compactLog(): Promise<boolean> {
    return this.direct === undefined ? true : this.direct.compactLog();
  }
}

async function retryWhileBusy(attempt: () => number | null): Promise<number> {
  for (;;) {
    const done = attempt();
    if (done !== null) return done;
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
}
