/** A dataset's marks written over the stored ones, in batches (SqlStore.importDataset). */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';
import type { MarkRecord } from '../store.js';

/** Rows per INSERT: 500 × 6 parameters stays far below SQLite's and PostgreSQL's parameter limits. */
export const IMPORT_BATCH_ROWS = 500;

/** Each student the marks name has exactly these marks afterwards, in the given order (after every stored mark). */
export async function replaceMarks(trx: Kysely<Database>, marks: readonly MarkRecord[]): Promise<void> {
  const named = [...new Set(marks.map((m) => m.id_student))];
  for (let start = 0; start < named.length; start += IMPORT_BATCH_ROWS) {
    await trx
      .deleteFrom('marks')
      .where('id_student', 'in', named.slice(start, start + IMPORT_BATCH_ROWS))
      .execute();
  }
  const top = await trx
    .selectFrom('marks')
    .select(sql<number | string | bigint | null>`max(seq)`.as('top'))
    .executeTakeFirst();
  const base = Number(top?.top ?? 0) + 1;
  for (let start = 0; start < marks.length; start += IMPORT_BATCH_ROWS) {
    const rows = marks.slice(start, start + IMPORT_BATCH_ROWS).map((m, i) => ({ ...m, seq: base + start + i }));
    await trx.insertInto('marks').values(rows).execute();
  }
}
