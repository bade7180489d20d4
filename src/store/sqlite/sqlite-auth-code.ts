/**
 * AuthCode's write on SQLite as one synchronous transaction over prepared statements: the same
 * work as SqlOutbox.acceptAuthCode (count the phone's codes of the last hour, store the code,
 * queue its SMS) without building, compiling and awaiting five queries through Kysely.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { refusal, windowStart } from '../auth-code-window.js';
import type { DirectAuthCode } from '../sql/engine-parts.js';
import type { AuthCodeOutcome, AuthCodeRequest } from '../store.js';

/**
 * Returns the outcome, or null when the connection is inside a transaction Kysely opened (an
 * outbox claim awaiting between statements): the caller then queues behind it the usual way, so
 * this write never lands inside someone else's transaction.
 */
export function sqliteAuthCodeWriter(database: BetterSqlite3.Database): DirectAuthCode {
  const limiting = database.prepare<[string, string, number], { created_at: string }>(
    'select created_at from auth_codes where phone = ? and created_at > ? order by created_at desc limit 1 offset ?',
  );
  const insertCode = database.prepare('insert into auth_codes (code, phone, created_at) values (?, ?, ?)');
  const insertMessage = database.prepare(
    "insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at) values (?, ?, ?, 'pending', 0, ?, ?)",
  );
  // IMMEDIATE: the write lock is taken before counting, so two processes cannot both accept the one too many.
  const accept = database.transaction((request: AuthCodeRequest): AuthCodeOutcome => {
    const at = request.at.toISOString();
    if (request.maxPerHour > 0) {
      const row = limiting.get(request.phone, windowStart(request.at), request.maxPerHour - 1);
      if (row !== undefined) return refusal(row.created_at, request.at);
    }
    insertCode.run(request.code, request.phone, at);
    insertMessage.run(request.phone, request.code, request.message, at, at);
    return { accepted: true };
  });
  return (request) => (database.inTransaction ? null : accept.immediate(request));
}
