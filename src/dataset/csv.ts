/**
 * CSV (RFC 4180) for one table per file, streamed: a header row names the columns (any order, the
 * key required, a missing column is null), then one record per row. Fields are quoted with '"'
 * (doubled inside) when they hold a comma, a quote or a line break. An unquoted field equal to the
 * null marker (default `\N`, as PostgreSQL's COPY writes) is null; every other field is text, so
 * an empty field is "" and a quoted "\N" is those two characters. Lines end with LF or CRLF; blank
 * lines are skipped.
 */
import type { ImportItem, ImportSource } from '../store/import/import-items.js';
import { checkRecord, KEY_FIELD, REQUIRED_FIELDS, TABLE_FIELDS } from '../store/import/record-check.js';
import type { TableName } from '../store/import/record-check.js';

export const DEFAULT_NULL_MARKER = '\\N';

export class CsvOptionError extends Error {
  readonly code = 'ERR_CSV_OPTION';
  constructor(message: string) {
    super(message);
    this.name = 'CsvOptionError';
  }
}

/** A null marker must read back unambiguously: nothing that would need quoting. */
export function checkNullMarker(marker: string): string {
  if (/[",\r\n]/.test(marker))
    throw new CsvOptionError(
      `the null marker ${JSON.stringify(marker)} must not contain a comma, a double quote or a line break`,
    );
  return marker;
}

export function csvSource(
  text: AsyncIterable<string>,
  table: TableName,
  nullMarker = DEFAULT_NULL_MARKER,
): ImportSource {
  return { items: readCsvTable(text, table, checkNullMarker(nullMarker)), tables: [table], labelled: false };
}

export async function* readCsvTable(
  text: AsyncIterable<string>,
  table: TableName,
  nullMarker: string,
): AsyncGenerator<ImportItem[]> {
  const parser = new CsvParser(nullMarker);
  const rows = new CsvRows(table);
  for await (const chunk of text) {
    parser.push(chunk);
    yield rows.take(parser);
    if (rows.finished) return;
  }
  parser.end();
  const last = rows.take(parser);
  if (!rows.finished && !rows.sawHeader)
    last.push({ kind: 'problem', message: 'line 1: the file is empty; expected a header row naming the columns' });
  yield last;
}

interface CsvRecord {
  readonly fields: readonly (string | null)[];
  readonly line: number;
}

/** Turns parsed records into rows of `table`: the header first, then checked records. */
class CsvRows {
  private header: string[] | null = null;
  private ord = 0;
  finished = false;
  constructor(private readonly table: TableName) {}

  get sawHeader(): boolean {
    return this.header !== null;
  }

  /** The rows and problems of the records parsed so far. */
  take(parser: CsvParser): ImportItem[] {
    const out: ImportItem[] = [];
    for (const record of parser.records) {
      if (this.finished) break;
      if (this.header === null) this.readHeader(record, out);
      else this.readRow(record, this.header, out);
    }
    parser.records.length = 0;
    if (parser.error !== null && !this.finished) {
      this.finished = true;
      out.push({ kind: 'problem', message: `line ${parser.error.line}: ${parser.error.message}` });
    }
    return out;
  }

  private readHeader(record: CsvRecord, out: ImportItem[]): void {
    const fields: readonly string[] = TABLE_FIELDS[this.table];
    const names: string[] = [];
    const problems: string[] = [];
    for (const name of record.fields) {
      const shown = name === null ? 'the null marker' : JSON.stringify(name);
      if (name === null || !fields.includes(name))
        problems.push(`unknown column ${shown}; the ${this.table} columns are ${fields.join(', ')}`);
      else if (names.includes(name)) problems.push(`column ${shown} appears twice`);
      else names.push(name);
    }
    for (const required of REQUIRED_FIELDS[this.table]) {
      if (!names.includes(required))
        problems.push(
          `the header has no "${required}" column (${KEY_FIELD[this.table] === required ? 'the key' : 'required'})`,
        );
    }
    for (const message of problems) out.push({ kind: 'problem', message: `line ${record.line}: ${message}` });
    if (problems.length > 0) this.finished = true;
    this.header = names;
  }

  private readRow(record: CsvRecord, header: readonly string[], out: ImportItem[]): void {
    const ord = this.ord++;
    if (this.table === 'push' && ord > 0) {
      out.push({ kind: 'problem', message: `line ${record.line}: the push table has one row; this is row ${ord + 1}` });
      return;
    }
    if (record.fields.length !== header.length) {
      out.push({
        kind: 'problem',
        message: `line ${record.line}: expected ${header.length} fields as in the header, found ${record.fields.length}`,
      });
      return;
    }
    const item: Record<string, string | null> = {};
    for (let i = 0; i < header.length; i++) item[header[i]!] = record.fields[i]!;
    const row = checkRecord(this.table, item, null, (message) =>
      out.push({ kind: 'problem', message: `line ${record.line}: ${message()}` }),
    );
    if (row !== null) out.push({ kind: 'row', table: this.table, ord, line: record.line, record: row } as ImportItem);
  }
}

/** The RFC 4180 state machine, fed chunk by chunk; complete records wait in `records`. */
export class CsvParser {
  readonly records: CsvRecord[] = [];
  error: { line: number; message: string } | null = null;
  private fields: (string | null)[] = [];
  private field = '';
  private quoted = false;
  private inQuotes = false;
  /** A quote was seen inside quotes: the next character says whether it was "" or the closing one. */
  private quoteSeen = false;
  private afterClose = false;
  private pendingCr = false;
  private started = false;
  private line = 1;
  private recordLine = 1;
  private quoteLine = 1;

  constructor(private readonly nullMarker: string) {}

  push(text: string): void {
    // A byte order mark is not part of the first column's name.
    let i = this.line === 1 && !this.started && this.fields.length === 0 && text.charCodeAt(0) === 0xfeff ? 1 : 0;
    const n = text.length;
    while (i < n && this.error === null) {
      if (this.inQuotes) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (text.charCodeAt(i) === 0x22) {
            this.field += '"';
            i++;
            continue;
          }
          this.inQuotes = false;
          this.afterClose = true;
          continue;
        }
        const q = text.indexOf('"', i);
        const end = q === -1 ? n : q;
        this.countLines(text, i, end);
        this.field += text.slice(i, end);
        i = end;
        if (q !== -1) {
          this.quoteSeen = true;
          i++;
        }
        continue;
      }
      const c = text.charCodeAt(i);
      if (this.pendingCr) {
        this.pendingCr = false;
        if (c !== 0x0a) return this.fail(this.line, 'a carriage return outside quotes must be followed by a line feed');
      }
      if (c === 0x2c) {
        this.endField();
        i++;
      } else if (c === 0x0a) {
        // A blank line is skipped: a lone empty field must be written as "" (exports write every column).
        if (this.started || this.fields.length > 0) this.endRecord();
        this.line++;
        this.recordLine = this.line;
        i++;
      } else if (c === 0x0d) {
        this.pendingCr = true;
        i++;
      } else if (this.afterClose) {
        return this.fail(this.line, 'a closing quote must be followed by a comma or the end of the line');
      } else if (c === 0x22) {
        if (this.field !== '')
          return this.fail(
            this.line,
            'a double quote inside an unquoted field; quote the whole field and double the quote ("")',
          );
        this.inQuotes = true;
        this.quoted = true;
        this.started = true;
        this.quoteLine = this.line;
        i++;
      } else {
        let j = i + 1;
        while (j < n) {
          const d = text.charCodeAt(j);
          if (d === 0x2c || d === 0x0a || d === 0x0d || d === 0x22) break;
          j++;
        }
        this.field += text.slice(i, j);
        this.started = true;
        i = j;
      }
    }
  }

  end(): void {
    if (this.error !== null) return;
    if (this.inQuotes && !this.quoteSeen)
      return this.fail(this.quoteLine, 'a quoted field is not closed before the end of the file');
    if (this.pendingCr) return this.fail(this.line, 'a carriage return outside quotes must be followed by a line feed');
    this.inQuotes = false;
    if (this.started || this.fields.length > 0) this.endRecord();
  }

  private endField(): void {
    const value = this.field;
    this.fields.push(!this.quoted && value === this.nullMarker ? null : value);
    this.field = '';
    this.quoted = false;
    this.afterClose = false;
    this.started = true;
  }

  private endRecord(): void {
    this.endField();
    this.records.push({ fields: this.fields, line: this.recordLine });
    this.fields = [];
    this.started = false;
  }

  private countLines(text: string, from: number, to: number): void {
    for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) this.line++;
  }

  private fail(line: number, message: string): void {
    this.error = { line, message };
  }
}

/** One CSV line (with its line feed): null as the marker, quoting only where needed. */
export function csvLine(values: readonly (string | null)[], nullMarker = DEFAULT_NULL_MARKER): string {
  let out = '';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) out += nullMarker;
    else if (v === nullMarker || /[",\r\n]/.test(v)) out += `"${v.replace(/"/g, '""')}"`;
    else out += v;
  }
  return `${out}\n`;
}
