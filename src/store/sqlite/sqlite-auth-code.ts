/**
 * AuthCode's write on SQLite as one synchronous transaction over prepared statements: the same
 * work as SqlOutbox.acceptAuthCode (the phone's limits, the counters, store the code, queue its
 * SMS) without building, compiling and awaiting each query through Kysely.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { DirectAuthCode } from '../sql/engine-parts.js';
import { backoffRefusal, backoffStart, refusal, refusedUntil, windowStart } from '../auth-code-window.js';
import type { AuthCodeOutcome, AuthCodeRequest, CounterLimit } from '../store.js';

/**
 * Returns the outcome, or null when the connection is inside a transaction Kysely opened (an
 * outbox claim awaiting between statements): the caller then queues behind it the usual way, so
 * this write never lands inside someone else's transaction.
 */
export function sqliteAuthCodeWriter(database: BetterSqlite3.Database): DirectAuthCode {
  const limiting = database.prepare<[string, string, number], { created_at: string }>(
    'select created_at from auth_codes where phone = ? and created_at > ? order by created_at desc limit 1 offset ?',
  );
  const lastDay = database.prepare<[string, string], { n: number; last: string | null }>(
    'select count(*) as n, max(created_at) as last from auth_codes where phone = ? and created_at > ?',
  );
  const counterHits = database.prepare<[string], { hits: number }>('select hits from sms_counters where counter = ?');
  const countHit = database.prepare(
    'insert into sms_counters (counter, hits, expires_at) values (?, 1, ?) on conflict (counter) do update set hits = hits + 1',
  );
  const insertCode = database.prepare('insert into auth_codes (code, phone, created_at, country) values (?, ?, ?, ?)');
  const insertMessage = database.prepare(
    "insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at) values (?, ?, ?, 'pending', 0, ?, ?)",
  );
  const phoneLimits = (request: AuthCodeRequest): AuthCodeOutcome | null => {
    if (request.maxPerHour <= 0) return null;
    const row = limiting.get(request.phone, windowStart(request.at), request.maxPerHour - 1);
    if (row !== undefined) return refusal(row.created_at, request.at);
    if (request.backoff !== true) return null;
    const day = lastDay.get(request.phone, backoffStart(request.at))!;
    return backoffRefusal(request.phone, day.n, day.last, request.maxPerHour, request.at);
  };
  // The transaction holds the only write lock: reading every counter, then counting, is exact.
  const fullCounter = (counters: readonly CounterLimit[]): CounterLimit | undefined =>
    counters.find((c) => (counterHits.get(c.key)?.hits ?? 0) >= c.limit);
  // IMMEDIATE: the write lock is taken before counting, so two processes cannot both accept the one too many.
  const accept = database.transaction((request: AuthCodeRequest): AuthCodeOutcome => {
    const at = request.at.toISOString();
    const phoneRefusal = phoneLimits(request);
    if (phoneRefusal !== null) return phoneRefusal;
    const counters = request.counters ?? [];
    const full = fullCounter(counters);
    if (full !== undefined) return refusedUntil(full.until.getTime(), request.at, full.reason);
    if (request.dryRun === true) return { accepted: true };
    for (const c of counters) countHit.run(c.key, c.until.toISOString());
    insertCode.run(request.code, request.phone, at, request.country ?? null);
    insertMessage.run(request.phone, request.code, request.message, at, at);
    return { accepted: true };
  });
  return (request) => (database.inTransaction ? null : accept.immediate(request));
}
