import { defineOperation } from '../contract/define.js';
import type { OperationContext } from './context.js';

export const GetStudentsMarks = defineOperation({
  service: 'GetStudnetsMarks',
  name: 'GetStudentsMarks',
  doc: "Queries a student's marks by student and subject identifiers. The documented answer is empty.",
  params: [
    { name: 'StudnetID', type: 'string', doc: 'student identifier (spelled so on the wire)' },
    { name: 'SubjectID', type: 'string', doc: 'subject identifier' },
  ],
  result: { kind: 'void' },
  async run(_args, _ctx: OperationContext) {
    // The spec shows the marks result empty; extended results are a separate mode.
  },
});
