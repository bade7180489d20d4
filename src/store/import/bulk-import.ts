/**
 * Streamed import with bounded memory, all or nothing. Rows go into session-private staging tables
 * while the file is read (bulk-stager.ts: COPY on PostgreSQL; no write lock is held meanwhile, so
 * the service keeps writing); the database then finds duplicate keys; only a file without a single
 * problem is merged into the real tables, in one write transaction. A dry run stops before the merge.
 */
import type { Dialect } from '../schema/dialect.js';
import type { WithBulkSession } from './bulk-session.js';
import { createStager, quote, stageTable } from './bulk-stager.js';
import { plural } from './dataset-check.js';
import type { ImportSource } from './import-items.js';
import { KEY_FIELD, REQUIRED_FIELDS, TABLE_FIELDS, TABLE_NAMES } from './record-check.js';
import type { TableName } from './record-check.js';

export interface BulkImportOptions {
  /** Empty the tables the file provides first (same transaction as the merge). */
  readonly replace?: boolean;
  /** Check everything, write nothing. */
  readonly dryRun?: boolean;
  /** Every problem, as it is found: the file's in file order, then duplicate keys in file order. */
  readonly onProblem?: (message: string) => void;
  /** What the import is doing after reading the file, for progress displays. */
  readonly onPhase?: (phase: 'checking' | 'writing') => void;
}

export type BulkImportReport = Readonly<Record<TableName, number>>;

export class ImportRejectedError extends Error {
  readonly code = 'ERR_IMPORT_REJECTED';
  constructor(
    readonly problems: number,
    readonly rows: BulkImportReport,
  ) {
    super(`${plural(problems, 'problem')}; nothing was imported`);
    this.name = 'ImportRejectedError';
  }
}

/** Duplicate keys fetched per page, so a file of nothing but duplicates is reported in bounded memory. */
const PAGE_ROWS = 1000;

/** The stored table each importable one goes to. */
const STORED_TABLE: Readonly<Record<TableName, string>> = {
  students: 'students',
  devices: 'devices',
  marks: 'marks',
  push: 'push_settings',
};
/** Temporary tables named with their schema, never mistaken for a table of the database's schema. */
const temp = (dialect: Dialect, name: string): string => `${dialect.staging.tempSchema}.${name}`;
const stage = stageTable;

export async function bulkImport(
  withSession: WithBulkSession,
  lockScope: string,
  source: ImportSource,
  options: BulkImportOptions = {},
): Promise<BulkImportReport> {
  // One session throughout: temporary tables belong to the connection that made them.
  return withSession(async (session) => {
    const dialect = session.dialect;
    const run: Run = (text, parameters) => session.run(text, parameters);
    let problems = 0;
    const report = (message: string): void => {
      problems++;
      options.onProblem?.(message);
    };
    for (const table of TABLE_NAMES) {
      await run(`drop table if exists ${temp(dialect, stage(table))}`);
      const required: readonly string[] = REQUIRED_FIELDS[table];
      const columns = TABLE_FIELDS[table].map((f) => `${quote(f)} text${required.includes(f) ? ' not null' : ''}`);
      await run(
        `create temp table ${stage(table)} (${dialect.staging.ordColumn}, line bigint not null, ${columns.join(', ')})`,
      );
    }
    try {
      const counts: Record<TableName, number> = { students: 0, devices: 0, marks: 0, push: 0 };
      const stager = createStager(session);
      await inTransaction(run, dialect.begin('plain'), async () => {
        for await (const batch of source.items) {
          for (const item of batch) {
            if (item.kind === 'problem') {
              report(item.message);
              continue;
            }
            counts[item.table]++;
            await stager.add(item);
          }
        }
        await stager.finish();
      });
      // Where the merge refuses a key twice, the duplicates are looked for only when it does (schema/dialect.ts).
      const checkFirst = !dialect.staging.mergeRefusesDuplicates || problems > 0 || options.dryRun === true;
      const listDuplicates = async (): Promise<void> => {
        options.onPhase?.('checking');
        for (const table of TABLE_NAMES) {
          if (counts[table] === 0 || KEY_FIELD[table] === null) continue;
          await reportDuplicates(run, dialect, table, source.labelled, report);
        }
        if (problems > 0) throw new ImportRejectedError(problems, counts);
      };
      if (checkFirst) await listDuplicates();
      if (options.dryRun === true) return counts;
      options.onPhase?.('writing');
      try {
        await merge(run, dialect, lockScope, counts, options.replace === true ? source.tables : []);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (checkFirst || (code !== '23505' && code !== '21000')) throw error;
        await listDuplicates();
        throw error; // not a duplicate of the file's after all (a device written meanwhile)
      }
      return counts;
    } finally {
      // A lost connection takes its temporary tables with it; nothing to report then.
      for (const table of TABLE_NAMES)
        await run(`drop table if exists ${temp(dialect, stage(table))}`).catch(() => undefined);
    }
  });
}

/** The one write transaction: the staged rows merged into the stored tables (`replace`: emptied first). */
async function merge(
  run: Run,
  dialect: Dialect,
  lockScope: string,
  counts: Readonly<Record<TableName, number>>,
  replace: readonly TableName[],
): Promise<void> {
  await inTransaction(run, dialect.begin('write'), async () => {
    const lock = dialect.writeLockStatement('import', lockScope);
    if (lock !== null) await run(...lock);
    for (const table of replace) await run(`delete from ${STORED_TABLE[table]}`);
    if (counts.students > 0) {
      const columns = TABLE_FIELDS.students.map(quote).join(', ');
      const updates = TABLE_FIELDS.students.slice(1).map((f) => `${quote(f)} = excluded.${quote(f)}`);
      // New rows go after everything stored, in file order; stored ones keep their place. Rows
      // are written in key order: the primary key index is then filled page by page (on
      // PostgreSQL a million-row merge takes much less time than in file order: bench/RESULTS.md).
      await run(
        `insert into students (${columns}, seq) select ${columns}, ord + (select coalesce(max(seq), 0) + 1 from students) ` +
          `from ${stage('students')} where true order by id_student${await upsert(run, 'students', `(id_student) do update set ${updates.join(', ')}`)}`,
      );
    }
    if (counts.devices > 0) {
      await run(
        `insert into devices (id, token) select id, token from ${stage('devices')} where true order by id${await upsert(run, 'devices', '(id) do update set token = excluded.token')}`,
      );
    }
    if (counts.marks > 0) {
      // A student the file names has exactly the file's marks afterwards, in file order.
      const columns = TABLE_FIELDS.marks.map(quote).join(', ');
      await run(`delete from marks where id_student in (select id_student from ${stage('marks')})`);
      await run(
        `insert into marks (${columns}, seq) select ${columns}, ord + (select coalesce(max(seq), 0) + 1 from marks) from ${stage('marks')} order by ord`,
      );
    }
    if (counts.push > 0) {
      await run('delete from push_settings');
      await run(
        `insert into push_settings (id, "ServerKey", "SenderId") select 1, "ServerKey", "SenderId" from ${stage('push')}`,
      );
    }
  });
}

/**
 * The ON CONFLICT clause of a merge into `table`, or nothing when the table is empty (a first
 * import, or --replace): a plain insert spares a speculative index probe per row (PostgreSQL:
 * about a fifth of a million-row merge), and a key staged twice still fails it.
 * Imports are serialised by the write lock; a device written by `sis devices set` in between
 * would make the insert fail, and the import with it, never merge wrongly.
 */
async function upsert(run: Run, table: 'students' | 'devices', action: string): Promise<string> {
  const stored = await run(`select 1 as one from ${table} limit 1`);
  return stored.rows.length === 0 ? '' : ` on conflict ${action}`;
}

type Run = (text: string, parameters?: readonly unknown[]) => Promise<{ readonly rows: readonly unknown[] }>;

/** `work` in one transaction of the session: committed when it returns, rolled back when it throws. */
async function inTransaction(run: Run, begin: string, work: () => Promise<void>): Promise<void> {
  await run(begin);
  try {
    await work();
    await run('commit');
  } catch (error) {
    // The database may already have rolled back (or the connection be gone); the first error is the one to report.
    await run('rollback').catch(() => undefined);
    throw error;
  }
}

/** Reports every row whose key an earlier row of the file already used. */
async function reportDuplicates(
  run: Run,
  dialect: Dialect,
  table: TableName,
  labelled: boolean,
  report: (message: string) => void,
): Promise<void> {
  const key = KEY_FIELD[table]!;
  const name = stage(table);
  const any = (await run(`select 1 as one from ${name} group by ${quote(key)} having count(*) > 1 limit 1`)) as {
    rows: unknown[];
  };
  if (any.rows.length === 0) return;
  const dups = `${name}_dups`;
  await run(`drop table if exists ${temp(dialect, dups)}`);
  await run(
    `create temp table ${dups} as select ord, line, k, first_ord, first_line from (` +
      `select ord, line, ${quote(key)} as k, first_value(ord) over w as first_ord, first_value(line) over w as first_line ` +
      `from ${name} window w as (partition by ${quote(key)} order by ord)) d where ord <> first_ord`,
  );
  try {
    await run(`create index ${dups}_ord on ${dups} (ord)`);
    type Dup = {
      ord: number | string;
      line: number | string;
      k: string;
      first_ord: number | string;
      first_line: number | string;
    };
    let after = -1;
    for (;;) {
      const page = (await run(
        `select ord, line, k, first_ord, first_line from ${dups} where ord > ? order by ord limit ${PAGE_ROWS}`,
        [after],
      )) as {
        rows: Dup[];
      };
      for (const d of page.rows) {
        const shown = JSON.stringify(d.k);
        report(
          labelled
            ? `line ${d.line}: ${table}[${d.ord}].${key}: duplicate key ${shown}, first used by ${table}[${d.first_ord}] on line ${d.first_line}`
            : `line ${d.line}: ${key}: duplicate key ${shown}, first used on line ${d.first_line}`,
        );
      }
      if (page.rows.length < PAGE_ROWS) return;
      after = Number(page.rows.at(-1)!.ord);
    }
  } finally {
    await run(`drop table if exists ${temp(dialect, dups)}`);
  }
}
