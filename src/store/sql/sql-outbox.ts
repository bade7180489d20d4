/**
 * AuthCode's write and the SMS outbox, the same code for SQLite and PostgreSQL. A code is stored
 * and its message queued in one transaction, so an answered AuthCode always has a message that
 * some worker will deliver; workers claim messages under a lease (PostgreSQL: rows locked with
 * SKIP LOCKED, so two instances never take the same one) and record how each attempt ended; a
 * delivered message keeps no code or text (retention: see sql-retention.ts for the rest).
 */
import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import {
  ACCEPTED,
  backoffRefusal,
  backoffStart,
  hourlyRefusal,
  isPhoneRefusal,
  isRepeat,
  lastAttempt,
  lastRefusalAt,
  phoneRefusalsKey,
  phoneRefusalsUntil,
  REPEAT,
  refusedUntil,
  repeatStart,
  windowStart,
} from '../auth-code-window.js';
import type {
  DeliveryRate,
  DeliveryRates,
  DeliveryReceipt,
  OutboxBacklog,
  OutboxMessage,
  OutboxOutcome,
  OutboxState,
  OutboxStore,
  ReceiptStatus,
  SentMessage,
  SentMessageKey,
} from '../outbox-types.js';
import { MASKED_PHONE_SQL } from '../phone-mask.js';
import type { Dialect } from '../schema/dialect.js';
import type { Database, OutboxTable } from '../schema/tables.js';
import type { AuthCodeOutcome, AuthCodeRequest, CounterLimit } from '../store.js';
import { CounterFull, takeCounters } from './sql-sms.js';

/** A gateway's error text is kept for `sis outbox list`, not as a log: a line is enough. */
const MAX_ERROR_CHARS = 500;
const DEFAULT_LIST_LIMIT = 100;

const COLUMNS = [
  'id',
  'phone',
  'code',
  'message',
  'state',
  'attempts',
  'next_attempt_at',
  'last_error',
  'created_at',
  'delivered_at',
  'receipt',
  'receipt_reason',
  'traceparent',
  'gateway',
] as const satisfies readonly (keyof OutboxTable)[];

type OutboxRow = Pick<Selectable<OutboxTable>, (typeof COLUMNS)[number]>;

export class SqlOutbox implements OutboxStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly lockScope: string,
  ) {}

  async acceptAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    // A counter already full refuses without a transaction: during an attack, the refused codes
    // never queue on the counters' row locks that accepted ones hold.
    const full = await takeCounters(this.db, request.counters ?? [], true);
    if (full !== null) return refusedUntil(full.until.getTime(), request.at, full.reason);
    try {
      return await this.dialect.writeTransaction(this.db, (trx) => this.acceptIn(trx, request));
    } catch (error) {
      // A counter past its limit rolled the transaction back: nothing of this code is kept.
      if (error instanceof CounterFull)
        return refusedUntil(error.counter.until.getTime(), request.at, error.counter.reason);
      throw error;
    }
  }

  /** The per-phone limits, then the counters, then the code and its message (not on a dry run). */
  private async acceptIn(trx: Kysely<Database>, request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    const at = request.at.toISOString();
    if (request.test === true) {
      // A test number's code: kept as a test code, no message, only its own hourly counter (docs/sms.md).
      const full = await takeCounters(trx, request.counters ?? [], request.dryRun === true);
      if (full !== null) return refusedUntil(full.until.getTime(), request.at, full.reason);
      if (request.dryRun !== true)
        await trx
          .insertInto('auth_codes')
          .values({
            code: request.code,
            phone: request.phone,
            created_at: at,
            country: request.country ?? null,
            test: 1,
          })
          .execute();
      return ACCEPTED;
    }
    // Per phone: two instances counting one phone at once would otherwise both accept the one too many.
    // (SQLite's immediate transaction already serialises every writer.)
    await this.dialect.lockForWrite(trx, `auth-code:${request.phone}`, this.lockScope);
    let monitored: string[] | undefined;
    const phoneOutcome = await this.phoneLimits(trx, request);
    if (phoneOutcome?.accepted === true) {
      // A repeat is refused where a new code would be for a counter already full: the same answer.
      const full = await takeCounters(trx, request.counters ?? [], true);
      return full === null ? phoneOutcome : refusedUntil(full.until.getTime(), request.at, full.reason);
    }
    if (phoneOutcome !== null) {
      if (request.monitorPhone !== true) {
        if (request.dryRun !== true && isPhoneRefusal(phoneOutcome)) await this.countPhoneRefusal(trx, request);
        return phoneOutcome;
      }
      monitored = [phoneOutcome.reason];
    }
    const over: CounterLimit[] = [];
    const full = await takeCounters(trx, request.counters ?? [], request.dryRun === true, over);
    if (full !== null) return refusedUntil(full.until.getTime(), request.at, full.reason);
    if (over.length > 0) monitored = [...(monitored ?? []), ...over.map((c) => c.reason)];
    const outcome: AuthCodeOutcome = monitored === undefined ? ACCEPTED : { accepted: true, monitored };
    if (request.dryRun === true) return outcome;
    await trx
      .insertInto('auth_codes')
      .values({ code: request.code, phone: request.phone, created_at: at, country: request.country ?? null })
      .execute();
    await trx
      .insertInto('outbox')
      .values({
        phone: request.phone,
        code: request.code,
        message: request.message,
        state: 'pending',
        attempts: 0,
        next_attempt_at: at,
        created_at: at,
        country: request.country ?? null,
        phone_range: request.range ?? null,
        traceparent: request.traceparent ?? null,
      })
      .execute();
    return outcome;
  }

  /** The hourly limit, then the growing wait, then a repeat (auth-code-window.ts); null when none applies. */
  private async phoneLimits(trx: Kysely<Database>, request: AuthCodeRequest): Promise<AuthCodeOutcome | null> {
    const repeats = (request.repeatMs ?? 0) > 0;
    if (request.maxPerHour <= 0 && !repeats) return null;
    let query = trx
      .selectFrom('auth_codes')
      .select(['created_at', 'code'])
      .where('phone', '=', request.phone)
      .orderBy('created_at', 'desc');
    // The phone's codes of the hour (at most its limit); without a limit, only this code's repeats.
    query =
      request.maxPerHour > 0
        ? query.where('created_at', '>', windowStart(request.at)).limit(request.maxPerHour)
        : query.where('code', '=', request.code).where('created_at', '>', repeatStart(request)).limit(1);
    const recent = await query.execute();
    const hourly = hourlyRefusal(recent, request);
    if (hourly !== null) return hourly;
    if (request.backoff === true && request.maxPerHour > 0) {
      const day = await trx
        .selectFrom('auth_codes')
        .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.max('created_at').as('last')])
        .where('phone', '=', request.phone)
        .where('created_at', '>', backoffStart(request.at))
        .executeTakeFirstOrThrow();
      const refused = await trx
        .selectFrom('sms_counters')
        .select(['hits', 'expires_at'])
        .where('counter', '=', phoneRefusalsKey(request.phone))
        .executeTakeFirst();
      const last = lastAttempt(day.last ?? null, lastRefusalAt(refused?.expires_at));
      const count = Number(day.n) + Number(refused?.hits ?? 0);
      const wait = backoffRefusal(request.phone, count, last, request.maxPerHour, request.at);
      if (wait !== null) return wait;
    }
    return isRepeat(recent, request) ? REPEAT : null;
  }

  /** A guess refused by the phone's limits costs: one more against the phone's wait and its address's counter. */
  private async countPhoneRefusal(trx: Kysely<Database>, request: AuthCodeRequest): Promise<void> {
    const until = phoneRefusalsUntil(request.at);
    await trx
      .insertInto('sms_counters')
      .values({ counter: phoneRefusalsKey(request.phone), hits: 1, expires_at: until })
      .onConflict((oc) =>
        oc.column('counter').doUpdateSet({ hits: sql`${sql.ref('sms_counters.hits')} + 1`, expires_at: until }),
      )
      .execute();
    for (const c of request.counters ?? [])
      if (c.reason === 'address')
        await trx
          .insertInto('sms_counters')
          .values({ counter: c.key, hits: 1, expires_at: c.until.toISOString() })
          .onConflict((oc) => oc.column('counter').doUpdateSet({ hits: sql`${sql.ref('sms_counters.hits')} + 1` }))
          .execute();
  }

  async claimOutbox(worker: string, now: Date, leaseMs: number, limit: number): Promise<readonly OutboxMessage[]> {
    const at = now.toISOString();
    const until = new Date(now.getTime() + leaseMs).toISOString();
    // Every poll of every process comes here: look first, without a lock (SQLite: no write lock
    // taken, so an idle outbox never waits on, or delays, an import).
    const anyDue = await this.db
      .selectFrom('outbox')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', at)
      .limit(1)
      .executeTakeFirst();
    if (anyDue === undefined) return [];
    const rows = await this.dialect.writeTransaction(this.db, async (trx) => {
      const due = trx
        .selectFrom('outbox')
        .select('id')
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', at)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', at)]))
        .orderBy('id')
        .limit(limit);
      return (
        trx
          .updateTable('outbox')
          .set((eb) => ({ locked_by: worker, locked_until: until, attempts: eb('attempts', '+', 1) }))
          // Rows another instance is claiming right now are skipped, not waited for.
          .where('id', 'in', this.dialect.skipLocked(due))
          .returning(COLUMNS)
          .execute()
      );
    });
    return rows.map(toMessage).sort((a, b) => a.id - b.id);
  }

  async finishOutbox(id: number, worker: string, outcome: OutboxOutcome): Promise<void> {
    const released = { locked_by: null, locked_until: null };
    // Delivered: the gateway has the code, so the row keeps only what `sis outbox` shows (code and
    // text erased, phone masked), in the same update; failed ones keep theirs until retried or pruned.
    const values =
      outcome.state === 'delivered'
        ? {
            ...released,
            state: 'delivered',
            delivered_at: outcome.at.toISOString(),
            gateway: outcome.gateway ?? null,
            gateway_message_id: outcome.gatewayMessageId ?? null,
            code: '',
            message: '',
            phone: sql.raw<string>(MASKED_PHONE_SQL),
          }
        : outcome.state === 'pending'
          ? {
              ...released,
              next_attempt_at: outcome.nextAttemptAt.toISOString(),
              last_error: outcome.error.slice(0, MAX_ERROR_CHARS),
            }
          : { ...released, state: 'failed', last_error: outcome.error.slice(0, MAX_ERROR_CHARS) };
    // Only while the lease is still this worker's: after it ran out, another worker owns the message.
    await this.db.updateTable('outbox').set(values).where('id', '=', id).where('locked_by', '=', worker).execute();
  }

  async listOutbox(filter: {
    readonly state?: OutboxState;
    readonly limit?: number;
  }): Promise<readonly OutboxMessage[]> {
    let query = this.db.selectFrom('outbox').select(COLUMNS);
    if (filter.state !== undefined) query = query.where('state', '=', filter.state);
    const rows = await query
      .orderBy('id', 'desc')
      .limit(filter.limit ?? DEFAULT_LIST_LIMIT)
      .execute();
    return rows.map(toMessage);
  }

  async retryOutbox(ids: 'failed' | readonly number[], now: Date): Promise<number> {
    if (ids !== 'failed' && ids.length === 0) return 0;
    let query = this.db
      .updateTable('outbox')
      // A full round of attempts again, starting now.
      .set({ state: 'pending', attempts: 0, next_attempt_at: now.toISOString(), locked_by: null, locked_until: null })
      .where('state', '=', 'failed');
    if (ids !== 'failed') query = query.where('id', 'in', [...ids]);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async recordReceipt(receipt: DeliveryReceipt): Promise<'recorded' | 'unknown' | 'replayed'> {
    const at = receipt.at.toISOString();
    const result = await this.db
      .updateTable('outbox')
      .set({ receipt: receipt.status, receipt_reason: receipt.reason, receipt_at: at })
      .where('id', '=', receipt.id)
      // Only a newer receipt: a replayed one (or one overtaken by a later word) changes nothing;
      // a provider's final word without a signed time of its own only on a message without one.
      .where((eb) =>
        receipt.firstOnly === true
          ? eb('receipt_at', 'is', null)
          : eb.or([eb('receipt_at', 'is', null), eb('receipt_at', '<', at)]),
      )
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) return 'recorded';
    const row = await this.db.selectFrom('outbox').select('id').where('id', '=', receipt.id).executeTakeFirst();
    return row === undefined ? 'unknown' : 'replayed';
  }

  async sentMessage(key: SentMessageKey): Promise<SentMessage | null> {
    let query = this.db.selectFrom('outbox').select(['id', 'gateway', 'delivered_at']);
    query =
      'id' in key
        ? query.where('id', '=', key.id)
        : query.where('gateway', '=', key.gateway).where('gateway_message_id', '=', key.gatewayMessageId);
    const row = await query.executeTakeFirst();
    if (row === undefined) return null;
    return {
      id: Number(row.id),
      gateway: row.gateway ?? null,
      deliveredAt: row.delivered_at === null ? null : new Date(row.delivered_at),
    };
  }

  async sentByGateway(since: Date): Promise<ReadonlyMap<string, number>> {
    const rows = await this.db
      .selectFrom('outbox')
      .select((eb) => ['gateway', eb.fn.countAll<string | number>().as('n')])
      .where('state', '=', 'delivered')
      .where('delivered_at', '>', since.toISOString())
      .groupBy('gateway')
      .execute();
    return new Map(rows.map((r) => [r.gateway ?? 'unknown', Number(r.n)]));
  }

  async deliveryRates(since: Date, top: number): Promise<DeliveryRates> {
    const by = async (column: 'country' | 'phone_range') =>
      this.db
        .selectFrom('outbox')
        .select((eb) => [
          eb.ref(column).as('k'),
          eb.fn.countAll<string | number>().as('n'),
          eb.fn.sum<string | number | null>(sql`case when receipt = 'delivered' then 1 else 0 end`).as('d'),
        ])
        .where('receipt_at', '>', since.toISOString())
        .groupBy(column)
        .execute();
    return {
      countries: rates(await by('country'), (a, b) => b.receipts - a.receipts, top),
      ranges: rates(
        await by('phone_range'),
        (a, b) => b.receipts - b.delivered - (a.receipts - a.delivered) || b.receipts - a.receipts,
        top,
      ),
    };
  }

  async outboxCounts(): Promise<Readonly<Record<OutboxState, number>>> {
    const rows = await this.db
      .selectFrom('outbox')
      .select((eb) => ['state', eb.fn.countAll<string | number>().as('n')])
      .groupBy('state')
      .execute();
    const counts: Record<OutboxState, number> = { pending: 0, delivered: 0, failed: 0 };
    for (const row of rows) if (row.state in counts) counts[row.state as OutboxState] = Number(row.n);
    return counts;
  }

  async outboxBacklog(): Promise<OutboxBacklog> {
    // The partial index outbox_due covers exactly the pending rows.
    const row = await this.db
      .selectFrom('outbox')
      .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
    return { pending: Number(row.n), oldestPendingAt: row.oldest === null ? null : new Date(row.oldest) };
  }
}

/** Rates sorted by `order`, the first `top`; keys '' (not told) shown as unknown. */
function rates(
  rows: readonly { k?: string | null; n: string | number; d: string | number | null }[],
  order: (a: DeliveryRate, b: DeliveryRate) => number,
  top: number,
): DeliveryRate[] {
  return rows
    .map((r) => ({
      key: r.k == null || r.k === '' ? 'unknown' : r.k,
      receipts: Number(r.n),
      delivered: Number(r.d ?? 0),
    }))
    .sort((a, b) => order(a, b) || (a.key < b.key ? -1 : 1))
    .slice(0, top);
}

function toMessage(row: OutboxRow): OutboxMessage {
  return {
    id: Number(row.id),
    phone: row.phone,
    code: row.code,
    message: row.message,
    state: row.state as OutboxState,
    attempts: Number(row.attempts),
    nextAttemptAt: new Date(row.next_attempt_at),
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
    deliveredAt: row.delivered_at === null ? null : new Date(row.delivered_at),
    receipt: (row.receipt ?? null) as ReceiptStatus | null,
    receiptReason: row.receipt_reason ?? null,
    traceparent: row.traceparent ?? null,
    gateway: row.gateway ?? null,
  };
}
