/**
 * `sis import FILE`: loads a JSON dataset or a CSV table into the configured database, streamed
 * (memory stays small whatever the file's size), all or nothing, every problem named by its line.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { checkNullMarker, CsvOptionError, csvSource, DEFAULT_NULL_MARKER } from '../dataset/csv.js';
import { jsonDatasetSource } from '../dataset/json-stream.js';
import { decodeUtf8, InvalidUtf8Error } from '../dataset/utf8.js';
import { ImportRejectedError } from '../store/import/bulk-import.js';
import type { BulkImportReport } from '../store/import/bulk-import.js';
import { MAX_LISTED_PROBLEMS, plural } from '../store/import/dataset-check.js';
import type { ImportItem, ImportSource } from '../store/import/import-items.js';
import { TABLE_NAMES } from '../store/import/record-check.js';
import type { TableName } from '../store/import/record-check.js';
import { openStore } from '../store/open/open-store.js';
import type { SqlStore } from '../store/sql/sql-store.js';
import { isUnwritable } from '../store/write-retry.js';
import { optionValue } from './args.js';
import type { ParsedArgs } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { errorMessage, processOutput } from './output.js';
import type { CommandOutput } from './output.js';
import { Progress } from './progress.js';

export type { CommandOutput };

const USAGE = `Usage: sis import [options] FILE

Loads students, devices, marks and push settings from FILE ("-": standard input) into the
database named by SIS_DATABASE_URL (default sqlite:./data/sis.db), creating and migrating it
if needed. The file is streamed: memory stays small whatever its size.

Formats:
  json  the default: {"students": [...], "devices": [...], "marks": [...], "push": {...}},
        every member optional; see schema/dataset.schema.json, examples/dataset.json and
        examples/extended-dataset.json.
  csv   chosen by --table (which names the file's one table), --format csv or a FILE name
        ending in .csv. The first row names the columns (students: id_student, fullName,
        id_device, ShowActive, school_base_url; devices: id, token; marks: id_student,
        SubjectID, SubjectName, Mark, Term, MarkDate, Note; push: ServerKey, SenderId, one
        row), in any order; the key (marks: id_student and SubjectID) is required and a
        missing column is null. Fields are quoted RFC 4180 style ("" for a quote inside).
        An unquoted \\N is null (see --null); an empty field is an empty string; a quoted
        "\\N" is the text \\N. Lines end with LF or CRLF; blank lines are skipped.

Records are upserted by key (id_student, id): stored ones are updated and keep their order,
new ones come after them in file order. Marks have no key: every student the file has marks
for gets exactly the file's marks, in file order (other students keep theirs). Push settings
replace the stored ones. Every problem is reported with its line; if there is any, nothing
is written: the import is all or nothing (one transaction).

Options:
  --format json|csv          the file's format (default: csv with --table or a .csv name)
  --table TABLE              the table a CSV file holds: students, devices, marks or push
                             (required for CSV)
  --null TEXT                CSV: the unquoted field that means null (default \\N; --null ''
                             reads PostgreSQL's CSV default, an unquoted empty field)
  --replace                  first remove the stored rows of the file's tables (JSON: students
                             and devices, and marks and push when the file has them; CSV:
                             its table), in the same transaction
  --dry-run                  check the file and report every problem; the database is not
                             opened and nothing is written
  -h, --help                 show this help

Standard error shows progress (share of the file, rows, rate, time) when it is a terminal.
Exit status: 0 imported (with --dry-run: the file is valid), 1 invalid file or database
error, 2 usage error.
`;

const SPECS = [
  { name: 'format', value: true, choices: ['json', 'csv'] },
  { name: 'table', value: true, choices: TABLE_NAMES },
  { name: 'null', value: true },
  { name: 'replace' },
  { name: 'dry-run' },
] as const;

interface Plan {
  readonly file: string;
  readonly name: string;
  readonly format: 'json' | 'csv';
  readonly table: TableName | null;
  readonly nullMarker: string;
  readonly replace: boolean;
  readonly dryRun: boolean;
}

/** A file that could not be read; its message is complete. */
class InputError extends Error {}

export function createImportCommand(
  output: CommandOutput = processOutput,
  stdin: AsyncIterable<Uint8Array | string> = process.stdin,
): Command {
  const err = (line: string): unknown => output.stderr.write(`${line}\n`);

  return defineCommand(
    {
      name: 'import',
      summary: 'load a JSON dataset or a CSV table (students, devices, marks, push) streamed, all or nothing',
      usage: USAGE,
      options: SPECS,
      positionals: true,
      async run({ args, env, usageError }) {
        const plan = makePlan(args);
        if ('error' in plan) return usageError(plan.error);
        let size: number | null = null;
        if (plan.file !== '-') {
          try {
            const info = await stat(plan.file);
            if (info.isDirectory()) {
              err(`sis import: cannot read ${plan.file}: is a directory`);
              return 1;
            }
            size = info.isFile() ? info.size : null; // a pipe has no size: rows are counted instead
          } catch (error) {
            err(`sis import: ${readFailure(plan.file, error).message}`);
            return 1;
          }
        }

        const run = async (store: SqlStore, into: string): Promise<number> => {
          const progress = new Progress(
            output.stderr,
            `importing ${plan.file === '-' ? 'standard input' : basename(plan.file)}`,
            size,
          );
          let listed = 0;
          const onProblem = (message: string): void => {
            if (!plan.dryRun && listed >= MAX_LISTED_PROBLEMS) return;
            listed++;
            progress.done();
            err(`  ${message}`);
          };
          const source = openSource(plan, stdin, progress);
          let report: BulkImportReport;
          try {
            report = await store.admin.importStream(source, {
              replace: plan.replace,
              dryRun: plan.dryRun,
              onProblem,
              onPhase: (phase) => progress.phase(phase === 'checking' ? 'checking keys' : 'writing'),
            });
          } catch (error) {
            progress.done();
            // Run again by withCommandStore, reading the file anew (cli-store.ts).
            if (!plan.dryRun && plan.file !== '-' && isUnwritable(error)) throw error;
            const nothing = plan.dryRun ? ' (dry run: nothing was written)' : '; nothing was imported';
            if (error instanceof ImportRejectedError) {
              if (error.problems > listed) err(`  ... and ${plural(error.problems - listed, 'more problem')}`);
              err(`sis import: ${plan.name}: ${plural(error.problems, 'problem')}${nothing}`);
            } else if (error instanceof InvalidUtf8Error) {
              err(`sis import: ${plan.name}: ${error.message}${nothing}`);
            } else if (error instanceof InputError) {
              err(`sis import: ${error.message}${nothing}`);
            } else {
              err(`sis import: ${into}: ${errorMessage(error)}${nothing}`);
            }
            return 1;
          }
          progress.done();
          const what = describeRows(report, source.tables);
          if (plan.dryRun) {
            output.stdout.write(`${plan.name}: valid, ${what} (dry run: nothing was written)\n`);
          } else {
            const replaced = plan.replace
              ? `, replacing the previous ${listText(source.tables.map((t) => (t === 'push' ? 'push settings' : t)))}`
              : '';
            output.stdout.write(`imported ${what} into ${into}${replaced}\n`);
          }
          return 0;
        };

        if (plan.dryRun) return dryRun(run);
        return withCommandStore(
          'import',
          output,
          env,
          // A file is read again from its start on a second run (standard input cannot be): records are
          // upserted by key in one transaction, so a run after one that committed unseen changes nothing.
          { migrations: 'apply', bulk: true, failureNote: '; nothing was imported', rerun: plan.file !== '-' },
          (store, db) => run(store, db.shownUrl),
        );
      },
    },
    output,
  );
}

export const importCommand: Command = createImportCommand();

function makePlan(parsed: ParsedArgs): Plan | { error: string } {
  const files = parsed.positionals;
  if (files.length === 0) return { error: 'missing the dataset file' };
  if (files.length > 1) return { error: `one dataset file expected, got ${files.length}` };
  const file = files[0]!;
  const table = (optionValue(parsed, 'table') ?? null) as TableName | null;
  // A table name or a .csv file name says CSV; --format says it when neither does (standard input).
  const format = (optionValue(parsed, 'format') ?? (table !== null || /\.csv$/i.test(file) ? 'csv' : 'json')) as
    'json' | 'csv';
  const nullOption = optionValue(parsed, 'null');
  if (format === 'csv' && table === null)
    return { error: `a CSV file holds one table: name it with --table ${TABLE_NAMES.join('|')}` };
  if (format === 'json' && table !== null)
    return { error: '--table is for CSV files; a JSON file names its tables itself' };
  if (format === 'json' && nullOption !== undefined)
    return { error: '--null is for CSV files; JSON writes null itself' };
  let nullMarker = DEFAULT_NULL_MARKER;
  try {
    if (nullOption !== undefined) nullMarker = checkNullMarker(nullOption);
  } catch (error) {
    if (error instanceof CsvOptionError) return { error: error.message };
    throw error;
  }
  return {
    file,
    name: file === '-' ? 'standard input' : file,
    format,
    table,
    nullMarker,
    replace: parsed.options.has('replace'),
    dryRun: parsed.options.has('dry-run'),
  };
}

/** The file's rows, counted for the progress display as they pass. */
function openSource(plan: Plan, stdin: AsyncIterable<Uint8Array | string>, progress: Progress): ImportSource {
  async function* bytes(): AsyncGenerator<Uint8Array | string> {
    const input = plan.file === '-' ? stdin : createReadStream(plan.file, { highWaterMark: 1 << 16 });
    try {
      for await (const chunk of input) {
        progress.read(chunk.length);
        yield chunk as Uint8Array | string;
      }
    } catch (error) {
      throw new InputError(readFailure(plan.name, error).message);
    }
  }
  const text = decodeUtf8(bytes());
  const source = plan.format === 'csv' ? csvSource(text, plan.table!, plan.nullMarker) : jsonDatasetSource(text);
  async function* counted(): AsyncGenerator<readonly ImportItem[]> {
    for await (const batch of source.items) {
      let rows = 0;
      for (const item of batch) if (item.kind === 'row') rows++;
      progress.rows(rows);
      yield batch;
    }
  }
  return {
    items: counted(),
    // Read when asked: a JSON file's tables are known only once it has been read.
    get tables() {
      return source.tables;
    },
    labelled: source.labelled,
  };
}

/** A dry run checks the file in a scratch SQLite database: the real one is not even opened. */
async function dryRun(run: (store: SqlStore, into: string) => Promise<number>): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'sis-dry-run-'));
  try {
    const store = await openStore(`sqlite:${join(dir, 'check.db')}`);
    try {
      return await run(store, 'a scratch database');
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `5 students and 5 devices`, `5 students, 0 devices, 12 marks and the push settings`. */
export function describeRows(report: BulkImportReport, tables: readonly TableName[]): string {
  return listText(
    tables.map((t) =>
      t === 'push' ? (report.push > 0 ? 'the push settings' : 'no push settings') : plural(report[t], t.slice(0, -1)),
    ),
  );
}

/** `a`, `a and b`, `a, b and c`. */
function listText(parts: readonly string[]): string {
  return parts.length <= 2 ? parts.join(' and ') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

function readFailure(file: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : errorMessage(error);
  return new Error(`cannot read ${file}: ${why}`);
}
