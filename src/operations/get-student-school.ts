import { defineOperation } from '../contract/define.js';
import type { OperationContext } from './context.js';
import { StudentInfo } from './student-info.js';

export const GetStudentSchool = defineOperation({
  service: 'NotificationNotes',
  name: 'GetStudentSchool',
  doc: 'Lists the students of a school whose ShowActive flag equals show_active, in import order.',
  params: [
    { name: 'school_base_url', type: 'string', doc: 'the base URL that identifies the school' },
    { name: 'show_active', type: 'char', doc: 'the activity flag to match, one character' },
  ],
  result: { kind: 'list', item: StudentInfo },
  async run(args, ctx: OperationContext) {
    if (args.school_base_url === null) return [];
    return ctx.store.studentsOfSchool(args.school_base_url, String.fromCharCode(args.show_active));
  },
});
