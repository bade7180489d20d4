/**
 * The shadow's records (shadow-types.ts) over Kysely, the same SQL for SQLite and PostgreSQL.
 * Counts are upserted (INSERT ... ON CONFLICT adds), so instances on one PostgreSQL add up in
 * the same rows; examples are bounded under a lock, so two instances cannot both add the last one.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Dialect } from '../schema/dialect.js';
import type { Database } from '../schema/tables.js';
import type {
  ShadowCount,
  ShadowDifference,
  ShadowExample,
  ShadowKindExample,
  ShadowResult,
  ShadowRule,
  ShadowRuleSpec,
  ShadowStore,
} from '../shadow-types.js';

/** The start of the minute holding `at`, as stored. */
export function minuteBucket(at: Date): string {
  return new Date(Math.floor(at.getTime() / 60_000) * 60_000).toISOString();
}

const orNull = (v: string): string | null => (v === '' ? null : v);

export class SqlShadow implements ShadowStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly lockScope: string,
  ) {}

  async addCounts(bucket: Date, counts: readonly ShadowCount[]): Promise<void> {
    if (counts.length === 0) return;
    const at = minuteBucket(bucket);
    const rows = counts.map((c) => ({
      bucket: at,
      service: c.service ?? '',
      operation: c.operation ?? '',
      binding: c.binding,
      mode: c.mode ?? '',
      result: c.result,
      kind: c.kind ?? '',
      count: c.count,
    }));
    await this.dialect.writeTransaction(this.db, async (trx) => {
      await trx
        .insertInto('shadow_counts')
        .values(rows)
        .onConflict((oc) =>
          oc
            .columns(['bucket', 'service', 'operation', 'binding', 'mode', 'result', 'kind'])
            .doUpdateSet({ count: sql`shadow_counts.count + excluded.count` }),
        )
        .execute();
    });
  }

  async keepDifference(
    difference: ShadowDifference,
    at: Date,
    limits: { total: number; perKind: number },
  ): Promise<boolean> {
    if (limits.total <= 0 || limits.perKind <= 0) return false;
    const key = {
      service: difference.service ?? '',
      operation: difference.operation ?? '',
      binding: difference.binding,
      kind: difference.kind,
    };
    return this.dialect.writeTransaction(this.db, async (trx) => {
      await this.dialect.lockForWrite(trx, 'shadow-keep', this.lockScope);
      const total = await countOf(trx.selectFrom('shadow_differences').select(sql<string>`count(*)`.as('n')));
      if (total >= limits.total) return false;
      const ofKind = await countOf(
        trx
          .selectFrom('shadow_differences')
          .select(sql<string>`count(*)`.as('n'))
          .where('service', '=', key.service)
          .where('operation', '=', key.operation)
          .where('binding', '=', key.binding)
          .where('kind', '=', key.kind),
      );
      if (ofKind >= limits.perKind) return false;
      await trx
        .insertInto('shadow_differences')
        .values({ ...key, created_at: at.toISOString(), example: JSON.stringify(difference.example) })
        .execute();
      return true;
    });
  }

  async counts(since: Date): Promise<ShadowCount[]> {
    const rows = await this.db
      .selectFrom('shadow_counts')
      .select(['service', 'operation', 'binding', 'mode', 'result', 'kind', sql<string | number>`sum(count)`.as('n')])
      .where('bucket', '>=', minuteBucket(since))
      .groupBy(['service', 'operation', 'binding', 'mode', 'result', 'kind'])
      .orderBy('service')
      .orderBy('operation')
      .orderBy('binding')
      .orderBy('mode')
      .orderBy('result')
      .orderBy('kind')
      .execute();
    return rows.map((r) => ({
      service: orNull(r.service),
      operation: orNull(r.operation),
      binding: r.binding,
      mode: orNull(r.mode),
      result: r.result as ShadowResult,
      kind: orNull(r.kind),
      count: Number(r.n),
    }));
  }

  async hourly(
    since: Date,
  ): Promise<{ hour: string; operation: string | null; result: ShadowResult; count: number }[]> {
    const hour = sql<string>`substr(bucket, 1, 13)`;
    const rows = await this.db
      .selectFrom('shadow_counts')
      .select([hour.as('hour'), 'operation', 'result', sql<string | number>`sum(count)`.as('n')])
      .where('bucket', '>=', minuteBucket(since))
      .groupBy([hour, 'operation', 'result'])
      .orderBy(hour)
      .orderBy('operation')
      .execute();
    return rows.map((r) => ({
      hour: r.hour,
      operation: orNull(r.operation),
      result: r.result as ShadowResult,
      count: Number(r.n),
    }));
  }

  async examples(since: Date): Promise<ShadowKindExample[]> {
    const first = this.db
      .selectFrom('shadow_differences')
      .select(sql<number>`min(id)`.as('id'))
      .where('created_at', '>=', since.toISOString())
      .groupBy(['service', 'operation', 'binding', 'kind']);
    const rows = await this.db
      .selectFrom('shadow_differences')
      .select(['service', 'operation', 'binding', 'kind', 'example'])
      .where('id', 'in', first)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      service: orNull(r.service),
      operation: orNull(r.operation),
      binding: r.binding,
      kind: r.kind,
      example: JSON.parse(r.example) as ShadowExample,
    }));
  }

  async addRule(rule: ShadowRuleSpec, at: Date): Promise<number> {
    const row = await this.db
      .insertInto('shadow_rules')
      .values({
        created_at: at.toISOString(),
        kind: rule.kind ?? '',
        path: rule.path ?? '',
        service: rule.service ?? '',
        operation: rule.operation ?? '',
        binding: rule.binding ?? '',
        note: rule.note,
        hits: 0,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async rules(): Promise<ShadowRule[]> {
    const rows = await this.db.selectFrom('shadow_rules').selectAll().orderBy('id').execute();
    return rows.map((r) => ({
      id: Number(r.id),
      createdAt: new Date(r.created_at).toISOString(),
      kind: orNull(r.kind),
      path: orNull(r.path),
      service: orNull(r.service),
      operation: orNull(r.operation),
      binding: orNull(r.binding),
      note: r.note,
      hits: Number(r.hits),
    }));
  }

  async removeRule(id: number): Promise<boolean> {
    const removed = await this.db.deleteFrom('shadow_rules').where('id', '=', id).executeTakeFirst();
    return Number(removed.numDeletedRows) > 0;
  }

  async addRuleHits(hits: ReadonlyMap<number, number>): Promise<void> {
    if (hits.size === 0) return;
    await this.dialect.writeTransaction(this.db, async (trx) => {
      for (const [id, n] of hits)
        await trx
          .updateTable('shadow_rules')
          .set({ hits: sql`hits + ${n}` })
          .where('id', '=', id)
          .execute();
    });
  }

  async reset(): Promise<number> {
    return this.dialect.writeTransaction(this.db, async (trx) => {
      const removed = await trx.deleteFrom('shadow_differences').executeTakeFirst();
      await trx.deleteFrom('shadow_counts').execute();
      return Number(removed.numDeletedRows);
    });
  }

  async prune(before: Date, limit: number): Promise<number> {
    const cutoff = before.toISOString();
    const oldest = this.db
      .selectFrom('shadow_differences')
      .select('id')
      .where('created_at', '<', cutoff)
      .orderBy('id')
      .limit(limit);
    const examples = await this.db.deleteFrom('shadow_differences').where('id', 'in', oldest).executeTakeFirst();
    const minutes = this.db
      .selectFrom('shadow_counts')
      .select('bucket')
      .where('bucket', '<', minuteBucket(before))
      .groupBy('bucket')
      .orderBy('bucket')
      .limit(limit);
    const counts = await this.db.deleteFrom('shadow_counts').where('bucket', 'in', minutes).executeTakeFirst();
    return Number(examples.numDeletedRows) + Number(counts.numDeletedRows);
  }
}

async function countOf(query: { executeTakeFirst(): Promise<{ n: string } | undefined> }): Promise<number> {
  return Number((await query.executeTakeFirst())?.n ?? 0);
}
