/**
 * AuthCode's write and the SMS outbox, the same code for SQLite and PostgreSQL. A code is stored
 * and its message queued in one transaction, so an answered AuthCode always has a message that
 * some worker will deliver; workers claim messages under a lease (PostgreSQL: rows locked with
 * SKIP LOCKED, so two instances never take the same one) and record how each attempt ended; a
 * delivered message keeps no code or text (retention: see sql-retention.ts for the rest).
 */
import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import type { OutboxBacklog, OutboxMessage, OutboxOutcome, OutboxState, OutboxStore } from '../outbox-types.js';
import type { Dialect } from '../schema/dialect.js';
import type { Database, OutboxTable } from '../schema/tables.js';
import type { AuthCodeOutcome, AuthCodeRequest } from '../store.js';
import { MASKED_PHONE_SQL } from '../phone-mask.js';
import { backoffRefusal, backoffStart, refusal, refusedUntil, windowStart } from '../auth-code-window.js';
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
    // Per phone: two instances counting one phone at once would otherwise both accept the one too many.
    // (SQLite's immediate transaction already serialises every writer.)
    await this.dialect.lockForWrite(trx, `auth-code:${request.phone}`, this.lockScope);
    const phoneRefusal = await this.phoneLimits(trx, request);
    if (phoneRefusal !== null) return phoneRefusal;
    const full = await takeCounters(trx, request.counters ?? [], request.dryRun === true);
    if (full !== null) return refusedUntil(full.until.getTime(), request.at, full.reason);
    if (request.dryRun === true) return { accepted: true };
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
      })
      .execute();
    return { accepted: true };
  }

  private async phoneLimits(trx: Kysely<Database>, request: AuthCodeRequest): Promise<AuthCodeOutcome | null> {
    if (request.maxPerHour <= 0) return null;
    // The maxPerHour-th newest code of the last hour: while it is in the window, the phone is at its limit.
    const limiting = await trx
      .selectFrom('auth_codes')
      .select('created_at')
      .where('phone', '=', request.phone)
      .where('created_at', '>', windowStart(request.at))
      .orderBy('created_at', 'desc')
      .limit(1)
      .offset(request.maxPerHour - 1)
      .executeTakeFirst();
    if (limiting !== undefined) return refusal(limiting.created_at, request.at);
    if (request.backoff !== true) return null;
    const day = await trx
      .selectFrom('auth_codes')
      .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.max('created_at').as('last')])
      .where('phone', '=', request.phone)
      .where('created_at', '>', backoffStart(request.at))
      .executeTakeFirstOrThrow();
    return backoffRefusal(request.phone, Number(day.n), day.last ?? null, request.maxPerHour, request.at);
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
  };
}
