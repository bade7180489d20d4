/**
 * A SQLite database file read or written directly, as an operator would with the sqlite3 shell:
 * each call a connection of its own, closed at once; rows as plain objects (node:sqlite's have no
 * prototype, and the tests compare them with object literals).
 */
import { DatabaseSync } from 'node:sqlite';
import type { SQLInputValue } from 'node:sqlite';

export function sqliteRows<R = Record<string, unknown>>(file: string, sql: string, ...params: SQLInputValue[]): R[] {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db
      .prepare(sql)
      .all(...params)
      .map((row) => ({ ...row }) as R);
  } finally {
    db.close();
  }
}

export function sqliteRun(file: string, sql: string, ...params: SQLInputValue[]): void {
  const db = new DatabaseSync(file);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}
