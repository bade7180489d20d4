/**
 * A phone as logs, `sis outbox` and erased outbox rows show it: its last two digits, the rest as
 * stars. The SQL form does the same to a stored phone in its normal form (an optional + and digits),
 * so a delivered message is masked in the very update that marks it delivered.
 */

/** Keeps the last two digits: enough to tell messages apart, not to read a number. */
export function maskPhone(phone: string): string {
  return phone.replace(/\d(?=\d{2})/g, '*');
}

const STARS = `'${'*'.repeat(32)}'`;

/**
 * `maskPhone(phone)` for a phone in normal form, in SQL that SQLite and PostgreSQL both run
 * (substr and ||; no regular expressions in SQLite). Shorter values are left as they are.
 */
export const MASKED_PHONE_SQL =
  `case when length(phone) < 4 then phone ` +
  `when phone like '+%' then '+' || substr(${STARS}, 1, length(phone) - 3) || substr(phone, length(phone) - 1) ` +
  `else substr(${STARS}, 1, length(phone) - 2) || substr(phone, length(phone) - 1) end`;
