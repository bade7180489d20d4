import type { StructSpec } from '../contract/types.js';

/** One mark, as the extended GetStudentsMarks answers it (`ArrayOfMark` at a GET/POST root). */
export const Mark = {
  name: 'Mark',
  fields: ['id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note'],
} as const satisfies StructSpec;
