/**
 * Old rows in bulk for the retention tests, each batch one statement (a recursive CTE on SQLite,
 * generate_series on PostgreSQL): codes and outbox messages created at a given time, as AuthCode
 * would have stored them then.
 */
import type { FreshDatabase, StoreTarget } from './store-targets.js';

/** `n` codes `LABEL-1`…`LABEL-n` created at `at`, for phones +1555LLNNNNNNN (one phone per code). */
export async function seedCodes(
  target: StoreTarget,
  db: FreshDatabase,
  n: number,
  at: Date,
  label: string,
): Promise<void> {
  await db.sql(
    target.name === 'SQLite'
      ? `with recursive s(i) as (select 1 union all select i + 1 from s where i < ?)
         insert into auth_codes (code, phone, created_at) select '${label}-' || i, '+1555' || printf('%07d', i), ? from s`
      : `insert into auth_codes (code, phone, created_at)
         select '${label}-' || i, '+1555' || lpad(i::text, 7, '0'), $2 from generate_series(1, $1::int) as s(i)`,
    [n, at.toISOString()],
  );
}

/** `n` messages in `state` created at `at`, with their code and text (as stored before erasing at delivery). */
export async function seedMessages(
  target: StoreTarget,
  db: FreshDatabase,
  n: number,
  at: Date,
  state: 'pending' | 'delivered' | 'failed',
  label: string,
): Promise<void> {
  await db.sql(
    target.name === 'SQLite'
      ? `with recursive s(i) as (select 1 union all select i + 1 from s where i < ?), t(at) as (select ?)
         insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at, delivered_at)
         select '+1555' || printf('%07d', i), '${label}-' || i, 'Your code is ${label}-' || i, '${state}', 1, at, at, ${state === 'delivered' ? 'at' : 'null'} from s, t`
      : `insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at, delivered_at)
         select '+1555' || lpad(i::text, 7, '0'), '${label}-' || i, 'Your code is ${label}-' || i, '${state}', 1, $2, $2, ${state === 'delivered' ? '$2::timestamptz' : 'null'}
         from generate_series(1, $1::int) as s(i)`,
    [n, at.toISOString()],
  );
}
