/**
 * Validation of a dataset where it enters the store, with every problem named by where it is, so an
 * operator fixes a file in one pass. Nothing reaches the store unless the whole dataset is valid,
 * which is also where characters XML 1.0 forbids are refused: answers stay well-formed. (Reading a
 * dataset file is src/dataset's business.)
 */
import type { Dataset, DeviceRecord, MarkRecord, PushSettingsRecord, StudentRecord } from '../store.js';
import {
  checkRecord,
  findXmlForbiddenCharacter,
  isObject,
  KEY_FIELD,
  kind,
  member,
  TOP_LEVEL_NAMES,
  TOP_LEVEL_SHAPE,
} from './record-check.js';
import type { TableName, TableRecord } from './record-check.js';

/** How many problems one error lists; a broken generator can produce one per row. */
export const MAX_LISTED_PROBLEMS = 50;

export class DatasetError extends Error {
  readonly code = 'ERR_DATASET';
  constructor(
    /** The first problems found (at most MAX_LISTED_PROBLEMS), each starting with where it is. */
    readonly problems: readonly string[],
    /** All problems found, listed or not. */
    readonly totalProblems: number = problems.length,
    readonly source?: string,
  ) {
    const unlisted = totalProblems - problems.length;
    super(
      `${source ?? 'dataset'}: ${plural(totalProblems, 'problem')}, nothing imported\n` +
        problems.map((p) => `  ${p}\n`).join('') +
        (unlisted > 0 ? `  ... and ${plural(unlisted, 'more problem')}\n` : ''),
    );
    this.name = 'DatasetError';
  }
}

const TOP_LEVEL = ['students', 'devices', 'marks', 'push'] as const;

/** Checks a value already in memory (parsed JSON, or data built in code) and returns a clean copy. */
export function validateDataset(value: unknown, source?: string): Dataset {
  return checkDataset(value, new Problems(), source);
}

export { findXmlForbiddenCharacter };

export class Problems {
  readonly listed: string[] = [];
  total = 0;
  /** Takes a thunk so that rows past the listing limit cost no message formatting. */
  add(message: () => string): void {
    if (this.total++ < MAX_LISTED_PROBLEMS) this.listed.push(message());
  }
}

export function checkDataset(value: unknown, problems: Problems, source: string | undefined): Dataset {
  let students: StudentRecord[] = [];
  let devices: DeviceRecord[] = [];
  let marks: MarkRecord[] | undefined;
  let push: PushSettingsRecord | undefined;
  if (!isObject(value)) {
    problems.add(() => `(top level): expected ${TOP_LEVEL_SHAPE}, found ${kind(value)}`);
  } else {
    for (const key of Object.keys(value)) {
      if (!(TOP_LEVEL as readonly string[]).includes(key)) {
        problems.add(() => `${member('', key)}: unknown top-level member; expected ${TOP_LEVEL_NAMES}`);
      }
    }
    students = checkRecords(value['students'], 'students', problems);
    devices = checkRecords(value['devices'], 'devices', problems);
    if (value['marks'] !== undefined) marks = checkRecords(value['marks'], 'marks', problems);
    if (value['push'] !== undefined) push = checkPush(value['push'], problems);
  }
  if (problems.total > 0) throw new DatasetError(problems.listed, problems.total, source);
  // Marks and push only when given, so a dataset of students and devices reads back as it was.
  return { students, devices, ...(marks === undefined ? {} : { marks }), ...(push === undefined ? {} : { push }) };
}

function checkPush(value: unknown, problems: Problems): PushSettingsRecord | undefined {
  if (!isObject(value)) {
    problems.add(() => `push: expected an object with ServerKey and SenderId, found ${kind(value)}`);
    return undefined;
  }
  return checkRecord('push', value, 'push', problems.add.bind(problems)) ?? undefined;
}

function checkRecords<T extends TableName>(list: unknown, table: T, problems: Problems): TableRecord[T][] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    problems.add(() => `${table}: expected an array, found ${kind(list)}`);
    return [];
  }
  const keyField = KEY_FIELD[table];
  const seen = new Map<string, number>();
  const records: TableRecord[T][] = [];
  const add = problems.add.bind(problems);
  list.forEach((item: unknown, index) => {
    const record = checkRecord(table, item, `${table}[${index}]`, add);
    if (record === null) return;
    if (keyField === null) {
      records.push(record);
      return;
    }
    const key = (record as Record<string, string>)[keyField]!;
    const first = seen.get(key);
    if (first !== undefined)
      add(
        () => `${table}[${index}].${keyField}: duplicate key ${JSON.stringify(key)}, first used by ${table}[${first}]`,
      );
    else seen.set(key, index);
    records.push(record);
  });
  return records;
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
