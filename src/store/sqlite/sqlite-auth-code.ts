/**
 * AuthCode's write on SQLite as one synchronous transaction over prepared statements: the same
 * work as SqlAuthCode.acceptAuthCode (the phone's limits, a repeat, the counters, store the code,
 * queue its SMS; a refusal by the phone's limits counted against the phone and its address; a
 * test number's code only stored) without building, compiling and awaiting
 * each query through Kysely.
 */
import {
  ACCEPTED,
  backoffRefusal,
  backoffStart,
  counterRefusal,
  hourlyRefusal,
  isPhoneRefusal,
  isRepeat,
  lastAttempt,
  lastRefusalAt,
  phoneRefusalsKey,
  phoneRefusalsUntil,
  REPEAT,
  repeatStart,
  windowStart,
} from '../auth-code-window.js';
import type { RecentCode } from '../auth-code-window.js';
import type { DirectAuthCode } from '../sql/engine-parts.js';
import type { AuthCodeOutcome, AuthCodeRequest } from '../store.js';
import type { SqliteConnection } from './sqlite-driver.js';

/**
 * Returns the outcome, or null when the connection is inside a transaction Kysely opened (an
 * outbox claim awaiting between statements): the caller then queues behind it the usual way, so
 * this write never lands inside someone else's transaction.
 */
export function sqliteAuthCodeWriter(database: SqliteConnection): DirectAuthCode {
  const recentCodes = database.prepare(
    'select created_at, code from auth_codes where phone = ? and created_at > ? order by created_at desc limit ?',
  );
  const repeats = database.prepare(
    'select created_at, code from auth_codes where phone = ? and code = ? and created_at > ? limit 1',
  );
  const lastDay = database.prepare(
    'select count(*) as n, max(created_at) as last from auth_codes where phone = ? and created_at > ?',
  );
  const counterHits = database.prepare('select hits from sms_counters where counter = ?');
  const countHit = database.prepare(
    'insert into sms_counters (counter, hits, expires_at) values (?, 1, ?) on conflict (counter) do update set hits = hits + 1',
  );
  const phoneRefusals = database.prepare('select hits, expires_at from sms_counters where counter = ?');
  const countPhoneRefusal = database.prepare(
    'insert into sms_counters (counter, hits, expires_at) values (?, 1, ?) on conflict (counter) do update set hits = hits + 1, expires_at = excluded.expires_at',
  );
  const insertCode = database.prepare(
    'insert into auth_codes (code, phone, created_at, country, test) values (?, ?, ?, ?, ?)',
  );
  const insertMessage = database.prepare(
    "insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at, country, phone_range, traceparent) values (?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?)",
  );
  /** The hourly limit, then the growing wait, then a repeat (auth-code-window.ts); null when none applies. */
  const phoneLimits = (request: AuthCodeRequest): AuthCodeOutcome | null => {
    const max = request.maxPerHour;
    if (max <= 0 && (request.repeatMs ?? 0) <= 0) return null;
    const recent =
      max > 0
        ? (recentCodes.all([request.phone, windowStart(request.at), max]) as RecentCode[])
        : (repeats.all([request.phone, request.code, repeatStart(request)]) as RecentCode[]);
    const hourly = hourlyRefusal(recent, request);
    if (hourly !== null) return hourly;
    if (request.backoff === true && max > 0) {
      const day = lastDay.get([request.phone, backoffStart(request.at)]) as { n: number; last: string | null };
      const refused = phoneRefusals.get([phoneRefusalsKey(request.phone)]) as
        { hits: number; expires_at: string } | undefined;
      const last = lastAttempt(day.last, lastRefusalAt(refused?.expires_at));
      const wait = backoffRefusal(request.phone, day.n + (refused?.hits ?? 0), last, max, request.at);
      if (wait !== null) return wait;
    }
    return isRepeat(recent, request) ? REPEAT : null;
  };
  /** A guess refused by the phone's limits costs: one more against the phone's wait and its address's counter. */
  const countPhoneRefusalOf = (request: AuthCodeRequest): void => {
    countPhoneRefusal.run([phoneRefusalsKey(request.phone), phoneRefusalsUntil(request.at)]);
    for (const c of request.counters ?? []) if (c.reason === 'address') countHit.run([c.key, c.until.toISOString()]);
  };
  // The transaction holds the only write lock: reading every counter, then counting, is exact.
  // Watched counters (monitor mode) past their limit are told in the outcome instead of refusing.
  const counted = (request: AuthCodeRequest, monitored: string[] | undefined): AuthCodeOutcome => {
    const counters = request.counters ?? [];
    let over = monitored;
    for (const c of counters) {
      if (((counterHits.get([c.key]) as { hits: number } | undefined)?.hits ?? 0) < c.limit) continue;
      if (c.monitor !== true) return counterRefusal(c, request.at);
      over = [...(over ?? []), c.reason];
    }
    return over === undefined ? ACCEPTED : { accepted: true, monitored: over };
  };
  // IMMEDIATE: the write lock is taken before counting, so two processes cannot both accept the one too many.
  const accept = (request: AuthCodeRequest): AuthCodeOutcome => {
    const at = request.at.toISOString();
    if (request.test === true) {
      // A test number's code: kept as a test code, no message, only its own hourly counter (docs/sms.md).
      const full = counted(request, undefined);
      if (!full.accepted || request.dryRun === true) return full;
      for (const c of request.counters ?? []) countHit.run([c.key, c.until.toISOString()]);
      insertCode.run([request.code, request.phone, at, request.country ?? null, 1]);
      return ACCEPTED;
    }
    // A counter already full refuses first, as SqlAuthCode's look before its transaction: the same
    // reason on both paths, and a repeat refused where a new code would be (the same answer).
    const countersOutcome = counted(request, undefined);
    if (!countersOutcome.accepted) return countersOutcome;
    const phoneOutcome = phoneLimits(request);
    if (phoneOutcome?.accepted === true) return phoneOutcome;
    let monitored: string[] | undefined;
    if (phoneOutcome !== null) {
      if (request.monitorPhone !== true) {
        if (request.dryRun !== true && isPhoneRefusal(phoneOutcome)) countPhoneRefusalOf(request);
        return phoneOutcome;
      }
      monitored = [phoneOutcome.reason];
    }
    const outcome = monitored === undefined ? countersOutcome : counted(request, monitored);
    if (!outcome.accepted || request.dryRun === true) return outcome;
    for (const c of request.counters ?? []) countHit.run([c.key, c.until.toISOString()]);
    insertCode.run([request.code, request.phone, at, request.country ?? null, 0]);
    insertMessage.run([
      request.phone,
      request.code,
      request.message,
      at,
      at,
      request.country ?? null,
      request.range ?? null,
      request.traceparent ?? null,
    ]);
    return outcome;
  };
  return (request) => (database.inTransaction ? null : database.immediate(() => accept(request)));
}
