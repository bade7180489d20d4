/**
 * Writes the rows of an import into the session's staging tables while the file is read, in
 * bounded memory. PostgreSQL: one `COPY ... FROM STDIN` per table, fed as rows arrive (the server
 * works while the file is parsed; the socket's back-pressure bounds what waits). SQLite: multi-row
 * INSERTs of 2,000 rows (7 × 2,000 values < 32,766), synchronous anyway.
 */
import type { BulkSession, CopyIn } from './bulk-session.js';
import type { ImportRow } from './import-items.js';
import { TABLE_FIELDS } from './record-check.js';
import type { TableName } from './record-check.js';

export const stageTable = (table: TableName): string => `sis_stage_${table}`;
export const quote = (name: string): string => `"${name}"`;

const SQLITE_BATCH_ROWS = 2000;
/** COPY text is handed to the socket in pieces of about this many characters. */
const COPY_PIECE_CHARS = 1 << 16;

export interface Stager {
  add(row: ImportRow): Promise<void>;
  /** Writes what is left and waits until every row is in its staging table. */
  finish(): Promise<void>;
}

export function createStager(session: BulkSession): Stager {
  return session.copyIn === undefined ? new InsertStager(session) : new CopyStager(session.copyIn);
}

const columns = (table: TableName): string => `ord, line, ${TABLE_FIELDS[table].map(quote).join(', ')}`;
const value = (row: ImportRow, field: string): string | null =>
  (row.record as Readonly<Record<string, string | null>>)[field] ?? null;

class CopyStager implements Stager {
  private table: TableName | null = null;
  private copy: CopyIn | null = null;
  private text = '';

  constructor(private readonly copyIn: (statement: string) => CopyIn) {}

  async add(row: ImportRow): Promise<void> {
    // A file's tables come one after the other (a session runs one COPY at a time).
    if (row.table !== this.table) {
      await this.finish();
      this.table = row.table;
      this.copy = this.copyIn(`copy ${stageTable(row.table)} (${columns(row.table)}) from stdin`);
    }
    let line = `${row.ord}\t${row.line}`;
    for (const field of TABLE_FIELDS[row.table]) line += `\t${copyText(value(row, field))}`;
    this.text += `${line}\n`;
    if (this.text.length >= COPY_PIECE_CHARS) await this.flush();
  }

  async finish(): Promise<void> {
    if (this.copy === null) return;
    await this.flush();
    const copy = this.copy;
    this.copy = null;
    this.table = null;
    await copy.end();
  }

  private async flush(): Promise<void> {
    const text = this.text;
    this.text = '';
    if (text !== '') await this.copy!.write(text);
  }
}

const COPY_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '\ufffd',
};

/**
 * A value in COPY's text format: null is `\N`; backslash, tab, line feed and carriage return are
 * escaped. PostgreSQL text cannot hold U+0000: it is staged as U+FFFD (the row is refused for it
 * anyway, as a character XML 1.0 forbids, so nothing with it is ever merged).
 */
export function copyText(text: string | null): string {
  if (text === null) return '\\N';
  return /[\\\t\n\r\0]/.test(text) ? text.replace(/[\\\t\n\r\0]/g, (c) => COPY_ESCAPES[c]!) : text;
}

/** Batches of rows per table, one written while the next is read; never more, so memory stays bounded. */
class InsertStager implements Stager {
  private readonly rows = new Map<TableName, ImportRow[]>();
  private writing: Promise<unknown> | null = null;
  private readonly fullBatchSql = new Map<TableName, string>();

  constructor(private readonly session: BulkSession) {}

  async add(row: ImportRow): Promise<void> {
    let rows = this.rows.get(row.table);
    if (rows === undefined) this.rows.set(row.table, (rows = []));
    rows.push(row);
    if (rows.length >= SQLITE_BATCH_ROWS) await this.flush(row.table);
  }

  async finish(): Promise<void> {
    for (const table of this.rows.keys()) await this.flush(table);
    await this.writing;
  }

  private async flush(table: TableName): Promise<void> {
    const rows = this.rows.get(table)!;
    if (rows.length === 0) return;
    this.rows.set(table, []);
    await this.writing; // a failed batch fails the import here
    const writing = this.write(table, rows);
    // Awaited by the next flush or by finish; until then its failure must not count as unhandled.
    writing.catch(() => undefined);
    this.writing = writing;
  }

  private async write(table: TableName, rows: readonly ImportRow[]): Promise<void> {
    const fields = TABLE_FIELDS[table];
    const parameters: unknown[] = [];
    for (const row of rows) {
      parameters.push(row.ord, row.line);
      for (const field of fields) parameters.push(value(row, field));
    }
    let text = rows.length === SQLITE_BATCH_ROWS ? this.fullBatchSql.get(table) : undefined;
    if (text === undefined) {
      const tuple = `(${Array.from({ length: fields.length + 2 }, () => '?').join(', ')})`;
      text = `insert into ${stageTable(table)} (${columns(table)}) values ${Array.from({ length: rows.length }, () => tuple).join(', ')}`;
      if (rows.length === SQLITE_BATCH_ROWS) this.fullBatchSql.set(table, text);
    }
    await this.session.run(text, parameters);
  }
}
