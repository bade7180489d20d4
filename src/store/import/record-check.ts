/**
 * The rules one imported record must follow, shared by the in-memory dataset check and the streamed
 * JSON and CSV readers, so every path refuses the same things with the same words.
 */
import type { DeviceRecord, MarkRecord, PushSettingsRecord, StudentRecord } from '../store.js';

export const STUDENT_FIELDS = ['id_student', 'fullName', 'id_device', 'ShowActive', 'school_base_url'] as const;
export const DEVICE_FIELDS = ['id', 'token'] as const;
export const MARK_FIELDS = ['id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note'] as const;
export const PUSH_FIELDS = ['ServerKey', 'SenderId'] as const;

/** The importable tables and their fields, key (or required fields) first. */
export const TABLE_FIELDS = {
  students: STUDENT_FIELDS,
  devices: DEVICE_FIELDS,
  marks: MARK_FIELDS,
  push: PUSH_FIELDS,
} as const;
export type TableName = keyof typeof TABLE_FIELDS;
export const TABLE_NAMES: readonly TableName[] = ['students', 'devices', 'marks', 'push'];

/** Fields that must be strings, never null or missing: the key, or what a mark is looked up by. */
export const REQUIRED_FIELDS: { readonly [T in TableName]: readonly string[] } = {
  students: ['id_student'],
  devices: ['id'],
  marks: ['id_student', 'SubjectID'],
  push: [],
};

/** The field no two records of one file may share; null where records have no key (a student's marks are a list, push is one record). */
export const KEY_FIELD: { readonly [T in TableName]: string | null } = {
  students: 'id_student',
  devices: 'id',
  marks: null,
  push: null,
};

/** How problems name the top-level members of a JSON dataset. */
export const TOP_LEVEL_SHAPE = 'an object with "students", "devices", "marks" or "push" members';
export const TOP_LEVEL_NAMES = '"students", "devices", "marks" or "push"';

export interface TableRecord {
  students: StudentRecord;
  devices: DeviceRecord;
  marks: MarkRecord;
  push: PushSettingsRecord;
}

/** Adds a problem; a thunk, so that rows past a listing limit cost no message formatting. */
export type AddProblem = (message: () => string) => void;

/**
 * Checks one record of `table`. `label` names it in messages (`students[3]`), or is null when the
 * caller says where it is (a CSV line). Returns the record when its required fields are strings,
 * even if other fields are wrong (so duplicate keys can still be found); null otherwise.
 */
export function checkRecord<T extends TableName>(
  table: T,
  item: unknown,
  label: string | null,
  add: AddProblem,
): TableRecord[T] | null {
  const fields: readonly string[] = TABLE_FIELDS[table];
  const at = label ?? table;
  if (!isObject(item)) {
    add(() => `${at}: expected an object, found ${kind(item)}`);
    return null;
  }
  for (const key of Object.keys(item)) {
    if (!fields.includes(key)) add(() => `${member(label ?? '', key)}: unknown field; expected ${fields.join(', ')}`);
  }
  const out: Record<string, string | null> = {};
  const required = REQUIRED_FIELDS[table];
  let keyOk = true;
  fields.forEach((field) => {
    const v = item[field];
    const where = label === null ? field : `${label}.${field}`;
    if (required.includes(field) && typeof v !== 'string') {
      const what = KEY_FIELD[table] === field ? 'key' : 'field';
      add(() =>
        v === undefined
          ? `${where}: required ${what} is missing`
          : `${where}: expected a string${what === 'key' ? ' (the key)' : ''}, found ${kind(v)}`,
      );
      keyOk = false;
      return;
    }
    if (v !== undefined && v !== null && typeof v !== 'string') {
      add(() => `${where}: expected a string or null, found ${kind(v)}`);
      out[field] = null;
      return;
    }
    if (typeof v === 'string') {
      const bad = findXmlForbiddenCharacter(v);
      if (bad !== null) add(() => `${where}: contains ${bad}, a character XML 1.0 does not allow`);
    }
    // Only undefined becomes null: '' is a value of its own and must stay ''.
    out[field] = v === undefined ? null : (v as string | null);
  });
  return keyOk ? (out as unknown as TableRecord[T]) : null;
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

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `a string`;
  if (typeof value === 'number') return `a number (${String(value)})`;
  if (typeof value === 'boolean') return String(value);
  return typeof value;
}

/** `students[3].name`, or `students[3]["odd name"]` when the name is not a plain identifier. */
export function member(base: string, key: string): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return base === '' ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

/** `U+0001`: how messages name a character. */
export function codePointName(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}
