/**
 * A dataset file that changes the demo data's first student of school A (and devices, if given):
 * what tests import with `sis import` from another process to see who notices the change.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SCHOOL_A = 'http://school-a.example';

/** Writes the change in `dir`; returns the file's path. */
export function writeSchoolChange(
  dir: string,
  fullName: string,
  devices: readonly { readonly id: string; readonly token: string }[] = [],
): string {
  const file = join(dir, 'change.json');
  const student = { id_student: '1', fullName, id_device: 'dev-001', ShowActive: '1', school_base_url: SCHOOL_A };
  writeFileSync(file, JSON.stringify({ students: [student], devices }));
  return file;
}
