/**
 * `sis import FILE.json [--replace]`: loads a dataset into the configured database, creating and
 * migrating it first if need be. The file is checked as a whole before anything is written.
 */
import { readFile } from 'node:fs/promises';
import { loadConfig } from '../config/config.js';
import { DatasetError, parseDataset, plural } from '../store/dataset.js';
import { DatabaseUrlError, redactDatabaseUrl } from '../store/database-url.js';
import { openStore } from '../store/open-store.js';
import type { Dataset, ImportReport } from '../store/store.js';
import type { Command } from './command.js';

/** Where a command writes; tests pass their own to read the output. */
export interface CommandOutput {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

const processOutput: CommandOutput = {
  stdout: { write: (text) => process.stdout.write(text) },
  stderr: { write: (text) => process.stderr.write(text) },
};

const USAGE = `Usage: sis import FILE.json [--replace]

Loads students and devices from a dataset file into the database named by
SIS_DATABASE_URL (default sqlite:./data/sis.db), creating and migrating the
database if needed. Records are upserted by key (id_student, id): stored ones
are updated and keep their order, new ones come after them. The whole file is
checked first; when anything is wrong every problem is listed and nothing is
written. The import is one transaction: all or nothing.

Options:
  --replace   remove all stored students and devices first (same transaction)
  -h, --help  show this help

The format: schema/dataset.schema.json; an example: examples/dataset.json.
Exit status: 0 imported, 1 invalid file or database error, 2 usage error.
`;

type Parsed = { help: true } | { help: false; file: string; replace: boolean } | { error: string };

function parseArgs(args: readonly string[]): Parsed {
  const files: string[] = [];
  let replace = false;
  let optionsDone = false;
  for (const arg of args) {
    if (optionsDone || arg === '-' || !arg.startsWith('-')) files.push(arg);
    else if (arg === '--') optionsDone = true;
    else if (arg === '--help' || arg === '-h') return { help: true };
    else if (arg === '--replace') replace = true;
    else return { error: `unknown option ${arg}` };
  }
  if (files.length === 0) return { error: 'missing the dataset file' };
  if (files.length > 1) return { error: `one dataset file expected, got ${files.length}` };
  return { help: false, file: files[0]!, replace };
}

export function createImportCommand(output: CommandOutput = processOutput): Command {
  const out = (line: string): unknown => output.stdout.write(`${line}\n`);
  const err = (line: string): unknown => output.stderr.write(`${line}\n`);

  return {
    name: 'import',
    summary: 'load students and devices from a JSON dataset file into the database',
    usage: USAGE,
    async run(args, env) {
      const parsed = parseArgs(args);
      if ('error' in parsed) {
        err(`sis import: ${parsed.error}\n`);
        output.stderr.write(USAGE);
        return 2;
      }
      if (parsed.help) {
        output.stdout.write(USAGE);
        return 0;
      }
      const { file, replace } = parsed;

      let databaseUrl: string;
      try {
        databaseUrl = loadConfig(env).databaseUrl;
      } catch (error) {
        err(`sis import: ${message(error)}`);
        return 1;
      }

      let dataset: Dataset;
      try {
        dataset = parseDataset(await readText(file), file);
      } catch (error) {
        if (!(error instanceof DatasetError)) {
          err(`sis import: ${message(error)}`);
          return 1;
        }
        reportProblems(err, error);
        return 1;
      }

      const shownUrl = redactDatabaseUrl(databaseUrl);
      let report: ImportReport;
      try {
        const store = await openStore(databaseUrl, { poolSize: 2 });
        try {
          report = await store.importDataset(dataset, { replace });
        } finally {
          await store.close();
        }
      } catch (error) {
        if (error instanceof DatasetError) {
          reportProblems(err, error);
        } else if (error instanceof DatabaseUrlError) {
          err(`sis import: ${error.message}`); // already names the (redacted) URL
        } else {
          err(`sis import: ${shownUrl}: ${message(error)}; nothing was imported`);
        }
        return 1;
      }
      const what = `${plural(report.students, 'student')} and ${plural(report.devices, 'device')}`;
      out(`imported ${what} into ${shownUrl}${replace ? ', replacing the previous students and devices' : ''}`);
      return 0;
    },
  };
}

export const importCommand: Command = createImportCommand();

async function readText(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : message(error);
    throw new Error(`cannot read ${file}: ${why}`);
  }
  try {
    // fatal: a wrong encoding must be reported, not imported as U+FFFD.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DatasetError(['the file is not valid UTF-8 text'], 1, file);
  }
}

function reportProblems(err: (line: string) => unknown, error: DatasetError): void {
  const where = error.source ?? 'dataset';
  err(`sis import: ${where}: ${plural(error.totalProblems, 'problem')}; nothing was imported`);
  for (const problem of error.problems) err(`  ${problem}`);
  const unlisted = error.totalProblems - error.problems.length;
  if (unlisted > 0) err(`  ... and ${plural(unlisted, 'more problem')}`);
}

function message(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Connection failures to several addresses arrive as an AggregateError with an empty message.
  if (error.message === '' && error instanceof AggregateError) return error.errors.map(message).join('; ');
  return error.message === '' ? ((error as NodeJS.ErrnoException).code ?? error.name) : error.message;
}
