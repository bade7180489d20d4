/** Micro-benchmark cases of the store over SQLite, next to node:sqlite used directly on the same file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openStore } from '../../src/store/open/open-store.js';
import type { Store } from '../../src/store/store.js';
import { BIG_SCHOOL } from '../scenarios/datasets.js';
import type { Dataset } from '../scenarios/datasets.js';
import type { MicroCase } from './measure.js';

export interface StoreCases {
  readonly cases: MicroCase[];
  /** Closes both connections and removes the database file. */
  close(): Promise<void>;
}

/** Opens a fresh SQLite file holding `data`; `bigCount` names the big school's list in the cases. */
export async function storeCases(data: Dataset, bigCount: number): Promise<StoreCases> {
  const dir = mkdtempSync(join(tmpdir(), 'sis-micro-'));
  const file = join(dir, 'micro.sqlite');
  const store: Store = await openStore(`sqlite:${file}`);
  await store.importDataset(data);
  const raw = new DatabaseSync(file, { readOnly: true });
  const tokenSql = 'select "token" from "devices" where "id" = ?';
  const studentsSql =
    'select "id_student", "fullName", "id_device", "ShowActive", "school_base_url" from "students" where "school_base_url" = ? and "ShowActive" = ? order by "seq"';
  const tokenStmt = raw.prepare(tokenSql);
  const studentsStmt = raw.prepare(studentsSql);
  const studentsArrays = raw.prepare(studentsSql);
  studentsArrays.setReturnArrays(true);
  const allPages = async (school: string, size: number): Promise<number> => {
    let n = 0;
    for await (const page of store.studentsOfSchoolPages(school, '1', size)) n += page.length;
    return n;
  };
  const cases: MicroCase[] = [
    {
      group: 'lookup',
      name: 'SqlStore.deviceToken (Kysely over node:sqlite)',
      fn: () => store.deviceToken('1'),
      async: true,
    },
    {
      group: 'lookup',
      name: 'node:sqlite prepare + get each time (what Kysely does)',
      fn: () => raw.prepare(tokenSql).get('1'),
    },
    { group: 'lookup', name: 'necessary: node:sqlite prepared statement .get', fn: () => tokenStmt.get('1') },
    {
      group: 'lookup',
      name: `SqlStore.studentsOfSchool (${bigCount} students)`,
      fn: () => store.studentsOfSchool(BIG_SCHOOL, '1'),
      async: true,
    },
    {
      group: 'lookup',
      name: `SqlStore.studentsOfSchoolPages, one page (${bigCount} students)`,
      fn: () => allPages(BIG_SCHOOL, 1000),
      async: true,
    },
    {
      group: 'lookup',
      name: `SqlStore.studentsOfSchoolPages, snapshot pages of 100 (${bigCount} students)`,
      fn: () => allPages(BIG_SCHOOL, 100),
      async: true,
    },
    {
      group: 'lookup',
      name: `node:sqlite prepared statement .all (${bigCount} students)`,
      fn: () => studentsStmt.all(BIG_SCHOOL, '1'),
    },
    {
      group: 'lookup',
      name: `node:sqlite prepared statement .all, arrays (${bigCount} students)`,
      fn: () => studentsArrays.all(BIG_SCHOOL, '1'),
    },
  ];
  const close = async (): Promise<void> => {
    raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { cases, close };
}
