/**
 * What a streamed reader of a file (src/dataset: JSON, CSV) hands to the bulk import: rows one at a
 * time, and problems as they are found, each already saying where it is.
 */
import type { TableName, TableRecord } from './record-check.js';

export type ImportRow = {
  [T in TableName]: {
    readonly kind: 'row';
    readonly table: T;
    /** Position among the file's rows of this table, from 0: new rows are stored in this order. */
    readonly ord: number;
    /** The line the row starts on. */
    readonly line: number;
    readonly record: TableRecord[T];
  };
}[TableName];

export interface ImportProblem {
  readonly kind: 'problem';
  /** Starts with where it is (`line 12: ...`). */
  readonly message: string;
}

export type ImportItem = ImportRow | ImportProblem;

export interface ImportSource {
  /** In batches (what one chunk of the file held): one await per batch, not per row. */
  readonly items: AsyncIterable<readonly ImportItem[]>;
  /** The tables the file provides rows for (what "replace" empties). */
  readonly tables: readonly TableName[];
  /** True when rows are named like `students[3]` (JSON); false when only their line names them (CSV). */
  readonly labelled: boolean;
}
