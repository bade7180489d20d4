/**
 * How an export is written, exactly what `sis import` reads back: JSON with one record per line
 * (every field present, null written as null), or one CSV table with a header row.
 */
import { csvLine, DEFAULT_NULL_MARKER } from './csv.js';
import { TABLE_FIELDS } from './record-check.js';
import type { TableName, TableRecord } from './record-check.js';

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
  let tables = 0;
  let first = true;
  return {
    begin: () => '{\n',
    table(table) {
      first = true;
      return `${tables++ > 0 ? '\n],\n' : ''}${JSON.stringify(table)}: [`;
    },
    rows(table, rows) {
      const fields = TABLE_FIELDS[table];
      let out = '';
      for (const row of rows) {
        const record = row as Readonly<Record<string, string | null>>;
        out += first ? '\n{' : ',\n{';
        first = false;
        for (let i = 0; i < fields.length; i++) {
          const f = fields[i]!;
          out += `${i > 0 ? ',' : ''}"${f}":${JSON.stringify(record[f] ?? null)}`;
        }
        out += '}';
      }
      return out;
    },
    end: () => (tables > 0 ? '\n]\n}\n' : '}\n'),
  };
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
