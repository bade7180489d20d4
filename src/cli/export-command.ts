/**
 * `sis export`: writes the stored students, devices, marks and push settings in the format `sis import` reads, streamed
 * page by page from one snapshot. An import of the output into an empty database, exported again,
 * gives the same bytes.
 */
import type { WriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { rename, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { checkNullMarker, CsvOptionError, DEFAULT_NULL_MARKER } from '../dataset/csv.js';
import { csvFormatter, jsonFormatter } from '../dataset/export-format.js';
import { TABLE_NAMES } from '../store/import/record-check.js';
import type { TableName } from '../store/import/record-check.js';
import { openPrivateFile } from '../store/private-file.js';
import { optionValue } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { describeRows } from './import-command.js';
import { CommandError, errorMessage, processOutput, writeText } from './output.js';
import type { CommandOutput, TextSink } from './output.js';
import { Progress } from './progress.js';

const USAGE = `Usage: sis export [--format json|csv] [--table students|devices|marks|push] [--null TEXT] [--output FILE]

Writes the students, devices, marks and push settings stored in the database named by
SIS_DATABASE_URL in the format \`sis import\` reads, from one consistent snapshot, streamed
(memory stays small whatever the database's size): students in the service's order (first
imported first), devices in byte order of their id, marks in import order, push settings as
one object (left out of JSON when none are stored). Importing the output into an empty
database and exporting again gives the same bytes. The database is not changed (nor migrated).

Options:
  --format json|csv          json (the default, or an --output name not ending in .csv):
                             both tables, or --table's, one record per line;
                             csv: one table, named by --table, with a header row
  --table TABLE              the table to write: students, devices, marks or push
                             (required for CSV)
  --null TEXT                CSV: how null is written (default \\N); a value equal to it is quoted
  --output FILE              write FILE (replaced only once complete) instead of standard output
  -h, --help                 show this help

Standard error shows rows, rate and time when it is a terminal (and the data does not go to it).
Exit status: 0 written, 1 database or file error, 2 usage error.
`;

const SPECS = [
  { name: 'format', value: true, choices: ['json', 'csv'] },
  { name: 'table', value: true, choices: TABLE_NAMES },
  { name: 'null', value: true },
  { name: 'output', value: true },
] as const;

export function createExportCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'export',
      summary: 'write the stored data as JSON or CSV, as `sis import` reads it',
      usage: USAGE,
      options: SPECS,
      async run({ args: parsed, env, usageError }) {
        const file = optionValue(parsed, 'output');
        const format = optionValue(parsed, 'format') ?? (file !== undefined && /\.csv$/i.test(file) ? 'csv' : 'json');
        const table = optionValue(parsed, 'table') as TableName | undefined;
        const nullOption = optionValue(parsed, 'null');
        if (format === 'csv' && table === undefined) {
          return usageError(`a CSV file holds one table: name it with --table ${TABLE_NAMES.join('|')}`);
        }
        if (format === 'json' && nullOption !== undefined)
          return usageError('--null is for CSV; JSON writes null itself');
        let nullMarker = DEFAULT_NULL_MARKER;
        try {
          if (nullOption !== undefined) nullMarker = checkNullMarker(nullOption);
        } catch (error) {
          if (error instanceof CsvOptionError) return usageError(error.message);
          throw error;
        }
        const tables = table === undefined ? TABLE_NAMES : [table];
        const formatter = format === 'csv' ? csvFormatter(nullMarker) : jsonFormatter();

        return withCommandStore('export', output, env, { migrations: 'require', bulk: true }, async (store, db) => {
          const target = file === undefined ? null : await openTarget(file);
          const sink: TextSink = target?.stream ?? output.stdout;
          // Not over the data itself when both go to the same terminal.
          const progress = new Progress(
            target !== null || output.stdout.isTTY !== true ? output.stderr : { write: () => undefined },
            `exporting to ${file ?? 'standard output'}`,
            null,
          );
          try {
            await writeText(sink, formatter.begin());
            const counts = await store.admin.export(tables, {
              table: (t) => writeText(sink, formatter.table(t)),
              rows: (t, rows) => {
                progress.rows(rows.length);
                return writeText(sink, formatter.rows(t, rows));
              },
            });
            progress.done();
            await writeText(sink, formatter.end());
            if (target !== null) {
              await target.commit();
              const what = describeRows(counts, tables);
              output.stdout.write(`exported ${what} from ${db.shownUrl} to ${file}\n`);
            }
            return 0;
          } catch (error) {
            progress.done();
            await target?.abandon();
            throw error;
          }
        });
      },
    },
    output,
  );
}

export const exportCommand: Command = createExportCommand();

/**
 * A file written beside its final name and renamed once complete: never a half export under that
 * name. It holds personal data: created 0600 (private-file.ts).
 */
async function openTarget(
  file: string,
): Promise<{ stream: WriteStream; commit(): Promise<void>; abandon(): Promise<void> }> {
  const temporary = `${file}.partial-${process.pid}`;
  let handle: FileHandle;
  try {
    handle = await openPrivateFile(temporary);
  } catch (error) {
    throw new CommandError(`cannot write ${file}: ${errorMessage(error)}`, { cause: error });
  }
  const stream = handle.createWriteStream();
  return {
    stream,
    async commit() {
      stream.end();
      await finished(stream);
      await rename(temporary, file);
    },
    async abandon() {
      stream.destroy();
      await rm(temporary, { force: true });
    },
  };
}
