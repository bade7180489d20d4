/**
 * The SMS outbox, the same code for SQLite and PostgreSQL (AuthCode's write queues its messages:
 * sql-auth-code.ts). Workers claim messages under a lease (PostgreSQL: rows locked with SKIP
 * LOCKED, so two instances never take the same one) and record how each attempt ended; a
 * delivered message keeps no code or text (retention: see sql-retention.ts for the rest).
 */
import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
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
  ) {}

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

  async finishOutbox(id: number, worker: string, outcome: OutboxOutcome): Promise<boolean> {
    const released = { locked_by: null, locked_until: null };
    const error = outcome.state === 'delivered' ? '' : outcome.error.slice(0, MAX_ERROR_CHARS);
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
          ? { ...released, next_attempt_at: outcome.nextAttemptAt.toISOString(), last_error: error }
          : { ...released, state: 'failed', last_error: error };
    const result = await this.db
      .updateTable('outbox')
      .set(values)
      .where('id', '=', id)
      // Only while the lease is still this worker's: after it ran out, another worker may own the
      // message. Or the row already holds this very outcome (released): an earlier write of it
      // landed and only its answer was lost, so writing it again changes nothing and says so.
      .where((eb) =>
        eb.or([
          eb('locked_by', '=', worker),
          eb.and([
            eb('locked_by', 'is', null),
            eb('state', '=', outcome.state),
            outcome.state === 'delivered'
              ? eb('delivered_at', '=', outcome.at.toISOString())
              : outcome.state === 'pending'
                ? eb('next_attempt_at', '=', outcome.nextAttemptAt.toISOString())
                : eb('last_error', '=', error),
          ]),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
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
