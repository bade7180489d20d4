/**
 * The SMS protection's tables over Kysely, the same code for SQLite and PostgreSQL (sms-types.ts),
 * and the velocity counters as AuthCode's transaction takes them (sql-auth-code.ts).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';
import type { BlockedRange, Busiest, RefusalCount, SmsStats, SmsStore } from '../sms-types.js';
import { MONITOR_PREFIX, periodStart, REFUSALS_KEPT_MS } from '../sms-types.js';
import type { CounterLimit } from '../store.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Thrown inside AuthCode's transaction when a counter is past its limit: the transaction rolls back. */
export class CounterFull extends Error {
  constructor(readonly counter: CounterLimit) {
    super(`counter ${counter.key} is full`);
    this.name = 'CounterFull';
  }
}

/**
 * Counts the code in each counter, in the order given (every transaction takes them in the same
 * order, so two cannot wait on each other); throws CounterFull at the first enforced one past its
 * limit. A watched counter (monitor mode) past its limit is added to `over` instead. A dry run
 * only reads: the first enforced counter already full, or null.
 */
export async function takeCounters(
  trx: Kysely<Database>,
  counters: readonly CounterLimit[],
  dryRun: boolean,
  over?: CounterLimit[],
): Promise<CounterLimit | null> {
  if (counters.length === 0) return null;
  if (dryRun) {
    const rows = await trx
      .selectFrom('sms_counters')
      .select(['counter', 'hits'])
      .where(
        'counter',
        'in',
        counters.map((c) => c.key),
      )
      .execute();
    const hits = new Map(rows.map((r) => [r.counter, Number(r.hits)]));
    for (const c of counters) {
      if ((hits.get(c.key) ?? 0) < c.limit) continue;
      if (c.monitor !== true) return c;
      over?.push(c);
    }
    return null;
  }
  // One statement for all: rows are counted (and, on PostgreSQL, locked until commit) in the order given.
  const rows = await trx
    .insertInto('sms_counters')
    .values(counters.map((c) => ({ counter: c.key, hits: 1, expires_at: c.until.toISOString() })))
    .onConflict((oc) => oc.column('counter').doUpdateSet({ hits: sql`${sql.ref('sms_counters.hits')} + 1` }))
    .returning(['counter', 'hits'])
    .execute();
  const hits = new Map(rows.map((r) => [r.counter, Number(r.hits)]));
  for (const counter of counters) {
    if ((hits.get(counter.key) ?? 0) <= counter.limit) continue;
    if (counter.monitor !== true) throw new CounterFull(counter);
    over?.push(counter);
  }
  return null;
}

export class SqlSms implements SmsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async smsAddressKey(): Promise<string> {
    const row = await this.db
      .selectFrom('sms_keys')
      .select('value')
      .where('name', '=', 'address-hash')
      .executeTakeFirst();
    if (row === undefined) throw new Error('sms_keys has no address-hash key: the database misses migration 7');
    return row.value;
  }

  async addSmsRefusals(rows: readonly RefusalCount[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('sms_refusals')
      .values(
        rows.map((r) => ({
          period_start: r.periodStart.toISOString(),
          reason: r.reason,
          country: r.country,
          phone_range: r.range,
          refused: r.refused,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['period_start', 'reason', 'country', 'phone_range'])
          .doUpdateSet({ refused: sql`${sql.ref('sms_refusals.refused')} + ${sql.ref('excluded.refused')}` }),
      )
      .execute();
  }

  async blockedRanges(now: Date): Promise<readonly BlockedRange[]> {
    const rows = await this.db
      .selectFrom('sms_blocked_ranges')
      .select(['phone_range', 'blocked_until', 'created_at'])
      .where((eb) => eb.or([eb('blocked_until', 'is', null), eb('blocked_until', '>', now.toISOString())]))
      .orderBy('phone_range')
      .execute();
    return rows.map((r) => ({
      range: r.phone_range,
      until: r.blocked_until === null ? null : new Date(r.blocked_until),
      createdAt: new Date(r.created_at),
    }));
  }

  async blockRange(range: string, until: Date | null, now: Date): Promise<void> {
    const values = { blocked_until: until?.toISOString() ?? null, created_at: now.toISOString() };
    await this.db
      .insertInto('sms_blocked_ranges')
      .values({ phone_range: range, ...values })
      .onConflict((oc) => oc.column('phone_range').doUpdateSet(values))
      .execute();
  }

  async allowRange(range: string): Promise<boolean> {
    const result = await this.db.deleteFrom('sms_blocked_ranges').where('phone_range', '=', range).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async sweepSms(now: Date): Promise<void> {
    const at = now.toISOString();
    await this.db.deleteFrom('sms_counters').where('expires_at', '<=', at).execute();
    const old = new Date(now.getTime() - REFUSALS_KEPT_MS).toISOString();
    await this.db.deleteFrom('sms_refusals').where('period_start', '<', old).execute();
    await this.db.deleteFrom('sms_blocked_ranges').where('blocked_until', '<=', at).execute();
  }

  async smsStats(now: Date, top: number): Promise<SmsStats> {
    const hour = new Date(now.getTime() - HOUR_MS);
    const day = new Date(now.getTime() - DAY_MS);
    return {
      refusedHour: await this.refusedBy(hour),
      refusedDay: await this.refusedBy(day),
      rangesHour: await this.busiest('range', hour, top),
      rangesDay: await this.busiest('range', day, top),
      countriesHour: await this.busiest('country', hour, top),
      countriesDay: await this.busiest('country', day, top),
    };
  }

  private async refusedBy(since: Date): Promise<ReadonlyMap<string, number>> {
    const rows = await this.db
      .selectFrom('sms_refusals')
      .select((eb) => ['reason', eb.fn.sum<string | number>('refused').as('n')])
      .where('period_start', '>=', periodStart(since).toISOString())
      .groupBy('reason')
      .orderBy('reason')
      .execute();
    return new Map(rows.map((r) => [r.reason, Number(r.n)]));
  }

  /** Codes asked per range or country: accepted ones (auth_codes, test codes left out) and refused ones (sms_refusals). */
  private async busiest(by: 'range' | 'country', since: Date, top: number): Promise<Busiest> {
    const key = by === 'range' ? sql<string>`substr(phone, 1, length(phone) - 4)` : sql<string>`coalesce(country, '')`;
    const accepted = await this.db
      .selectFrom('auth_codes')
      .select([key.as('k'), sql<string | number>`count(*)`.as('n')])
      .where('created_at', '>', since.toISOString())
      .where('phone', 'is not', null)
      .where('test', '=', 0)
      .groupBy(key)
      .execute();
    const column = by === 'range' ? 'phone_range' : 'country';
    const refused = await this.db
      .selectFrom('sms_refusals')
      .select((eb) => [eb.ref(column).as('k'), eb.fn.sum<string | number>('refused').as('n')])
      .where('period_start', '>=', periodStart(since).toISOString())
      // A would-be refusal of monitor mode was accepted: its code is counted among the accepted ones.
      .where('reason', 'not like', `${MONITOR_PREFIX}%`)
      .groupBy(column)
      .execute();
    const sums = new Map<string, number>();
    for (const r of [...accepted, ...refused]) sums.set(r.k, (sums.get(r.k) ?? 0) + Number(r.n));
    return [...sums]
      .map(([k, n]) => [k === '' ? 'unknown' : k, n] as const)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, top);
  }
}
