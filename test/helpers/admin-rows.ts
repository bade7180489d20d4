/**
 * Rows for the admin store tests (test/store/admin.test.ts): a file's text streamed in parts, a
 * JSON dataset as an import source, students made to order, and a snapshot export gathered in
 * memory table by table.
 */
import { jsonDatasetSource } from '../../src/dataset/json-stream.js';
import type { ImportSource } from '../../src/store/import/import-items.js';
import type { TableName, TableRecord } from '../../src/store/import/record-check.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import type { StudentRecord } from '../../src/store/store.js';

export async function* text(...parts: string[]): AsyncGenerator<string> {
  yield* parts;
}

export const json = (value: unknown): ImportSource => jsonDatasetSource(text(JSON.stringify(value, null, 1)));
export const student = (id: string, school = 'http://s.example', active = '1'): StudentRecord => ({
  id_student: id,
  fullName: `Student ${id}`,
  id_device: `dev-${id}`,
  ShowActive: active,
  school_base_url: school,
});
export const ids = (rows: readonly StudentRecord[]): string[] => rows.map((r) => r.id_student);

/** What `store.admin.export` gave: every table's rows, in the order they came, and its counts. */
export interface Exported {
  students: StudentRecord[];
  devices: TableRecord['devices'][];
  marks: TableRecord['marks'][];
  push: TableRecord['push'][];
  counts: Record<TableName, number>;
}

export async function exported(
  store: SqlStore,
  tables: readonly TableName[] = ['students', 'devices'],
): Promise<Exported> {
  const out: Omit<Exported, 'counts'> = {
    students: [],
    devices: [],
    marks: [],
    push: [],
  };
  const counts = await store.admin.export(tables, {
    async rows(table, rows) {
      (out[table] as unknown[]).push(...rows);
    },
  });
  return { ...out, counts };
}
