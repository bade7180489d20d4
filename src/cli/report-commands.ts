/**
 * Read-only looks at the database: `sis stats`, `sis schools`, `sis students`. Output is plain text
 * for people and scripts alike (tab-separated, or CSV for students, so it can be imported back).
 * None of them creates or migrates a database: they say to run `sis migrate` instead.
 */
import { csvLine, DEFAULT_NULL_MARKER } from '../dataset/csv.js';
import { STUDENT_FIELDS } from '../store/import/record-check.js';
import { optionValue } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { processOutput, writeText } from './output.js';
import type { CommandOutput } from './output.js';

const STATS_USAGE = `Usage: sis stats

Prints, one per line and tab-separated, the database (without its password), its schema
version, and the number of students, devices, recorded auth codes and distinct schools.

Exit status: 0 printed, 1 database error, 2 usage error.
`;

const SCHOOLS_USAGE = `Usage: sis schools

Prints every school URL found among the students with its number of students and of active
ones (ShowActive "1"): a header line, then one tab-separated line per school, in byte order of
the URL. Students without a school are counted on a line whose URL is \\N.

Exit status: 0 printed, 1 database error, 2 usage error.
`;

const STUDENTS_USAGE = `Usage: sis students --school URL [--active C]

Prints the students of one school as CSV (header row, then one row per student, null as \\N),
the format \`sis import --table students\` reads, in the order GetStudentSchool answers them.
The school URL must match exactly, as the service matches it.

Options:
  --school URL   the school_base_url to list (required)
  --active C     only students whose ShowActive is exactly C (GetStudentSchool's show_active)
  -h, --help     show this help

Exit status: 0 printed (even none), 1 database error, 2 usage error.
`;

export function createStatsCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'stats',
      summary: 'count students, devices, auth codes and schools',
      usage: STATS_USAGE,
      async run({ env }) {
        return withCommandStore('stats', output, env, { migrations: 'require' }, async (store, db) => {
          const stats = await store.admin.stats();
          const lines: [string, string | number][] = [
            ['database', db.shownUrl],
            ['schema_version', stats.schemaVersion],
            ['students', stats.students],
            ['devices', stats.devices],
            ['auth_codes', stats.authCodes],
            ['schools', stats.schools],
          ];
          output.stdout.write(lines.map(([k, v]) => `${k}\t${v}\n`).join(''));
          return 0;
        });
      },
    },
    output,
  );
}

export function createSchoolsCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'schools',
      summary: 'list the school URLs with their numbers of students',
      usage: SCHOOLS_USAGE,
      async run({ env }) {
        return withCommandStore('schools', output, env, { migrations: 'require' }, async (store) => {
          const schools = await store.admin.schools();
          let text = 'students\tactive\tschool_base_url\n';
          for (const s of schools) text += `${s.students}\t${s.active}\t${s.school ?? DEFAULT_NULL_MARKER}\n`;
          await writeText(output.stdout, text);
          return 0;
        });
      },
    },
    output,
  );
}

export function createStudentsCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'students',
      summary: 'list the students of one school as CSV',
      usage: STUDENTS_USAGE,
      options: [
        { name: 'school', value: true },
        { name: 'active', value: true },
      ],
      async run({ args: parsed, env, usageError }) {
        const school = optionValue(parsed, 'school');
        if (school === undefined) return usageError('missing --school URL');
        const active = optionValue(parsed, 'active') ?? null;
        return withCommandStore('students', output, env, { migrations: 'require', bulk: true }, async (store) => {
          await writeText(output.stdout, csvLine(STUDENT_FIELDS));
          await store.admin.forEachStudentOfSchool(school, active, async (rows) => {
            let text = '';
            for (const r of rows)
              text += csvLine([r.id_student, r.fullName, r.id_device, r.ShowActive, r.school_base_url]);
            await writeText(output.stdout, text);
          });
          return 0;
        });
      },
    },
    output,
  );
}

export const statsCommand: Command = createStatsCommand();
export const schoolsCommand: Command = createSchoolsCommand();
export const studentsCommand: Command = createStudentsCommand();
