import { defineOperation } from '../contract/define.js';
import type { StructSpec } from '../contract/types.js';
import type { OperationContext } from './context.js';

/** One mark, as the extended GetStudentsMarks answers it (`ArrayOfMark` at a GET/POST root). */
export const Mark = {
  name: 'Mark',
  fields: ['id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note'],
} as const satisfies StructSpec;

const base = {
  service: 'GetStudnetsMarks',
  name: 'GetStudentsMarks',
  params: [
    { name: 'StudnetID', type: 'string', doc: 'student identifier (spelled so on the wire)' },
    { name: 'SubjectID', type: 'string', doc: 'subject identifier; empty or missing for all subjects' },
  ],
} as const;

/** As the spec documents it: the answer is empty. */
export const GetStudentsMarks = defineOperation({
  ...base,
  doc: "Queries a student's marks by student and subject identifiers. The documented answer is empty.",
  result: { kind: 'void' },
  async run(_args, _ctx: OperationContext) {
    // The spec shows the marks result with no fields; SIS_RESULTS=extended answers them.
  },
});

/** Extended results: the student's marks for that subject (all subjects when none is given). */
export const GetStudentsMarksExtended = defineOperation({
  ...base,
  doc: "Answers a student's marks for a subject, or for all subjects when SubjectID is empty, in import order.",
  result: { kind: 'list', item: Mark },
  async run(args, ctx: OperationContext) {
    if (args.StudnetID === null) return [];
    const subject = args.SubjectID === null || args.SubjectID === '' ? null : args.SubjectID;
    return ctx.store.marksOf(args.StudnetID, subject);
  },
});
