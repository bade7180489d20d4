/**
 * How an export is written, exactly what `sis import` reads back: JSON with one record per line
 * (every field present, null written as null; push as one object), or one CSV table with a header row.
 */
import { TABLE_FIELDS } from '../store/import/record-check.js';
import type { TableName, TableRecord } from '../store/import/record-check.js';
import { csvLine, DEFAULT_NULL_MARKER } from './csv.js';

export interface ExportFormatter {
  /** Text before everything. */
  begin(): string;
  /** Text that opens a table. */
  table(table: TableName): string;
  /** One page of a table's rows. */
  rows<T extends TableName>(table: T, rows: readonly TableRecord[T][]): string;
  /** Text after everything. */
  end(): string;
}

export function jsonFormatter(): ExportFormatter {
  let members = 0;
  let inArray = false;
  let first = true;
  /** Closes the member before (an array) and separates the next one. */
  const next = (): string => {
    const out = `${inArray ? '\n]' : ''}${members++ > 0 ? ',\n' : ''}`;
    inArray = false;
    return out;
  };
  return {
    begin: () => '{\n',
    table(table) {
      // The push settings are one object, written with their row (and left out when none are stored).
      if (table === 'push') return '';
      first = true;
      const out = `${next()}${JSON.stringify(table)}: [`;
      inArray = true;
      return out;
    },
    rows(table, rows) {
      const fields = TABLE_FIELDS[table];
      if (table === 'push') return rows.map((row) => `${next()}"push": ${jsonRecord(fields, row)}`).join('');
      let out = '';
      for (const row of rows) {
        out += first ? '\n' : ',\n';
        first = false;
        out += jsonRecord(fields, row);
      }
      return out;
    },
    end: () => (members > 0 ? `${inArray ? '\n]' : ''}\n}\n` : '}\n'),
  };
}

/** One record on one line, every field present, null written as null. */
function jsonRecord(fields: readonly string[], row: object): string {
  const record = row as Readonly<Record<string, string | null>>;
  let out = '{';
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    out += `${i > 0 ? ',' : ''}"${f}":${JSON.stringify(record[f] ?? null)}`;
  }
  return `${out}}`;
}

export function csvFormatter(nullMarker = DEFAULT_NULL_MARKER): ExportFormatter {
  return {
    begin: () => '',
    table: (table) => csvLine(TABLE_FIELDS[table], nullMarker),
    rows(table, rows) {
      const fields = TABLE_FIELDS[table];
      let out = '';
      for (const row of rows) {
        const record = row as Readonly<Record<string, string | null>>;
        out += csvLine(
          fields.map((f) => record[f] ?? null),
          nullMarker,
        );
      }
      return out;
    },
    end: () => '',
  };
}
