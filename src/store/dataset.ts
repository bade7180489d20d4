/**
 * The import format: parsing and validation with every problem named by where it is, so an operator
 * fixes a file in one pass. Nothing reaches the store unless the whole dataset is valid, which is
 * also where characters XML 1.0 forbids are refused: answers stay well-formed.
 */
import type { Dataset, DeviceRecord, StudentRecord } from './store.js';
import { codePointName, JsonSyntaxError, parseJsonText, TextPosition } from './json-text.js';

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

const STUDENT_FIELDS = ['id_student', 'fullName', 'id_device', 'ShowActive', 'school_base_url'] as const;
const DEVICE_FIELDS = ['id', 'token'] as const;
const TOP_LEVEL = ['students', 'devices'] as const;

/** Parses a dataset file's text (UTF-8 already decoded); `source` names the file in the message. */
export function parseDataset(text: string, source?: string): Dataset {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let parsed;
  try {
    parsed = parseJsonText(body);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new DatasetError([error.message], 1, source);
    throw error;
  }
  const problems = new Problems();
  const position = new TextPosition(body);
  for (const d of parsed.duplicateMembers) {
    problems.add(() => `${position.describe(d.offset)}: member ${JSON.stringify(d.name)} appears twice in one object`);
  }
  return checkDataset(parsed.value, problems, source);
}

/** Checks a value already in memory (parsed JSON, or data built in code) and returns a clean copy. */
export function validateDataset(value: unknown, source?: string): Dataset {
  return checkDataset(value, new Problems(), source);
}

/** The first character XML 1.0 does not allow in `text` (as "U+XXXX"), or null when there is none. */
export function findXmlForbiddenCharacter(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0xd800) continue; // the common case, first
    if (c < 0x20) {
      if (c === 0x09 || c === 0x0a || c === 0x0d) continue;
      return codePointName(c);
    }
    if (c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return codePointName(c);
    }
    if (c <= 0xdfff || c === 0xfffe || c === 0xffff) return codePointName(c);
  }
  return null;
}

class Problems {
  readonly listed: string[] = [];
  total = 0;
  /** Takes a thunk so that rows past the listing limit cost no message formatting. */
  add(message: () => string): void {
    if (this.total++ < MAX_LISTED_PROBLEMS) this.listed.push(message());
  }
}

type FieldName = (typeof STUDENT_FIELDS)[number] | (typeof DEVICE_FIELDS)[number];

function checkDataset(value: unknown, problems: Problems, source: string | undefined): Dataset {
  let students: StudentRecord[] = [];
  let devices: DeviceRecord[] = [];
  if (!isObject(value)) {
    problems.add(() => `(top level): expected an object with "students" and/or "devices" arrays, found ${kind(value)}`);
  } else {
    for (const key of Object.keys(value)) {
      if (!(TOP_LEVEL as readonly string[]).includes(key)) {
        problems.add(() => `${member('', key)}: unknown top-level member; expected "students" or "devices"`);
      }
    }
    students = checkRecords(value['students'], 'students', STUDENT_FIELDS, problems, (r) => ({
      id_student: r.id_student as string,
      fullName: r.fullName ?? null,
      id_device: r.id_device ?? null,
      ShowActive: r.ShowActive ?? null,
      school_base_url: r.school_base_url ?? null,
    }));
    devices = checkRecords(value['devices'], 'devices', DEVICE_FIELDS, problems, (r) => ({
      id: r.id as string,
      token: r.token ?? null,
    }));
  }
  if (problems.total > 0) throw new DatasetError(problems.listed, problems.total, source);
  return { students, devices };
}

function checkRecords<F extends FieldName, R>(
  list: unknown,
  name: string,
  fields: readonly [F, ...F[]],
  problems: Problems,
  build: (fields: Partial<Record<F, string | null>>) => R,
): R[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    problems.add(() => `${name}: expected an array, found ${kind(list)}`);
    return [];
  }
  const keyField = fields[0];
  const seen = new Map<string, number>();
  const records: R[] = [];
  list.forEach((item: unknown, index) => {
    const at = `${name}[${index}]`;
    if (!isObject(item)) {
      problems.add(() => `${at}: expected an object, found ${kind(item)}`);
      return;
    }
    for (const key of Object.keys(item)) {
      if (!(fields as readonly string[]).includes(key)) {
        problems.add(() => `${member(at, key)}: unknown field; expected ${fields.join(', ')}`);
      }
    }
    const out: Partial<Record<F, string | null>> = {};
    for (const field of fields) {
      const v = item[field];
      const where = `${at}.${field}`;
      if (field === keyField) {
        if (typeof v !== 'string') {
          problems.add(() => (v === undefined ? `${where}: required key is missing` : `${where}: expected a string (the key), found ${kind(v)}`));
          continue;
        }
        const first = seen.get(v);
        if (first !== undefined) problems.add(() => `${where}: duplicate key ${JSON.stringify(v)}, first used by ${name}[${first}]`);
        else seen.set(v, index);
      } else if (v !== undefined && v !== null && typeof v !== 'string') {
        problems.add(() => `${where}: expected a string or null, found ${kind(v)}`);
        continue;
      }
      if (typeof v === 'string') {
        const bad = findXmlForbiddenCharacter(v);
        if (bad !== null) problems.add(() => `${where}: contains ${bad}, a character XML 1.0 does not allow`);
      }
      // Only undefined becomes null: '' is a value of its own and must stay ''.
      out[field] = v === undefined ? null : (v as string | null);
    }
    records.push(build(out));
  });
  return records;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `a string`;
  if (typeof value === 'number') return `a number (${String(value)})`;
  if (typeof value === 'boolean') return String(value);
  return typeof value;
}

/** `students[3].name`, or `students[3]["odd name"]` when the name is not a plain identifier. */
function member(base: string, key: string): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return base === '' ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
