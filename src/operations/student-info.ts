import type { StructSpec } from '../contract/types.js';

/** The class GetStudentSchool returns a list of; field order is the order XmlSerializer writes. */
export const StudentInfo = {
  name: 'StudentInfo',
  fields: ['id_student', 'fullName', 'id_device', 'ShowActive'],
  key: 'id_student',
} as const satisfies StructSpec;
