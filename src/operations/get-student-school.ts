import { defineOperation } from '../contract/define.js';
import { settleList } from '../contract/list-pages.js';
import type { StructSpec } from '../contract/types.js';
import { DEFAULT_LIST_PAGE_ROWS } from './context.js';
import type { OperationContext } from './context.js';

/** The class GetStudentSchool returns a list of; field order is the order XmlSerializer writes. */
export const StudentInfo = {
  name: 'StudentInfo',
  fields: ['id_student', 'fullName', 'id_device', 'ShowActive'],
  key: 'id_student',
  personal: ['fullName'],
} as const satisfies StructSpec;

export const GetStudentSchool = defineOperation({
  service: 'NotificationNotes',
  name: 'GetStudentSchool',
  doc: 'Lists the students of a school whose ShowActive flag equals show_active, in import order.',
  params: [
    { name: 'school_base_url', type: 'string', doc: 'the base URL that identifies the school' },
    { name: 'show_active', type: 'char', doc: 'the activity flag to match, one character' },
  ],
  result: { kind: 'list', item: StudentInfo },
  // A school's list is asked for again and again by its app's users, and costs a read and a write per student to build.
  cacheable: true,
  async run(args, ctx: OperationContext) {
    if (args.school_base_url === null) return [];
    const school = args.school_base_url;
    const showActive = String.fromCharCode(args.show_active);
    const pageRows = ctx.listPageRows ?? DEFAULT_LIST_PAGE_ROWS;
    if (pageRows <= 0) return ctx.store.studentsOfSchool(school, showActive);
    // A school of any size: pages from one snapshot, answered whole when they fit in one.
    return settleList(ctx.store.studentsOfSchoolPages(school, showActive, pageRows));
  },
});
