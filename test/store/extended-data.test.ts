/**
 * Marks and push settings as data, on both stores: imported from the JSON dataset (in memory and
 * streamed) and from CSV (`--table marks`, `--table push`), exported back byte for byte, refused
 * with the record and field named when a value cannot travel in XML, and stored with their own
 * rule (a student's marks are replaced as a whole; push settings are one record).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createExportCommand } from '../../src/cli/export-command.js';
import { createImportCommand } from '../../src/cli/import-command.js';
import type { CommandOutput } from '../../src/cli/output.js';
import { parseDataset } from '../../src/dataset/parse-dataset.js';
import { DatasetError } from '../../src/store/import/dataset-check.js';
import { redactDatabaseUrl } from '../../src/store/open/database-url.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { Dataset, MarkRecord } from '../../src/store/store.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import { repoRoot } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-extended-data-'));
after(async () => {
  await cleanupTargets();
  rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
function file(content: string, ext = 'json'): string {
  const path = join(dir, `f-${++counter}.${ext}`);
  writeFileSync(path, content);
  return path;
}

async function sis(
  name: 'import' | 'export',
  args: readonly string[],
  url: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const output: CommandOutput = {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  };
  const command = name === 'import' ? createImportCommand(output) : createExportCommand(output);
  const code = await command.run(args, { SIS_DATABASE_URL: url });
  return { code, stdout, stderr };
}

const mark = (id: string, subject: string, note: string | null = null, markValue = 'A'): MarkRecord => ({
  id_student: id,
  SubjectID: subject,
  SubjectName: subject === '' ? null : `Subject ${subject}`,
  Mark: markValue,
  Term: 'T1',
  MarkDate: '2024-03-14',
  Note: note,
});

/** Values that test quoting and escaping in both formats. */
const TRICKY: Dataset = {
  students: [
    { id_student: 's1', fullName: 'One', id_device: null, ShowActive: '1', school_base_url: 'http://a.example' },
  ],
  marks: [
    mark('s1', 'math', 'a, "quoted"\r\nline & <tag> 😀'),
    mark('s2', 'math', '\\N'),
    mark('s1', 'lit', ''),
    mark('s1', 'math', null, ' 17 / 20 '),
  ],
  push: { ServerKey: 'key,with "quotes"', SenderId: null },
};

for (const target of storeTargets) {
  describe(`marks and push settings as data on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    test('JSON and CSV export then import give the same bytes; the content is the dataset', async () => {
      const first = await target.fresh();
      const imported = await sis('import', [file(JSON.stringify(TRICKY))], first.url);
      assert.deepEqual(imported, {
        code: 0,
        stdout: `imported 1 student, 0 devices, 4 marks and the push settings into ${redactDatabaseUrl(first.url)}\n`,
        stderr: '',
      });
      const exported = await sis('export', [], first.url);
      assert.equal(exported.code, 0, exported.stderr);
      const parsed = parseDataset(exported.stdout);
      assert.deepEqual(parsed.marks, TRICKY.marks, 'marks in import order, every field as given');
      assert.deepEqual(parsed.push, TRICKY.push);
      assert.match(exported.stdout, /\n\],\n"push": \{"ServerKey":"key,with \\"quotes\\"","SenderId":null\}\n\}\n$/);
      for (const args of [
        [],
        ['--table', 'marks', '--format', 'csv'],
        ['--table', 'push', '--format', 'csv'],
        ['--table', 'marks', '--format', 'csv', '--null', ''],
      ]) {
        const out = await sis('export', args, first.url);
        const csv = args.includes('csv');
        const second = await target.fresh();
        const importArgs = csv ? ['--table', args[1]!, ...(args.includes('--null') ? ['--null', ''] : [])] : [];
        const back = await sis('import', [...importArgs, file(out.stdout, csv ? 'csv' : 'json')], second.url);
        assert.equal(back.code, 0, back.stderr);
        assert.equal((await sis('export', args, second.url)).stdout, out.stdout, `${args.join(' ')}: the same bytes`);
      }
      const pushCsv = (await sis('export', ['--table', 'push', '--format', 'csv'], first.url)).stdout;
      assert.equal(pushCsv, 'ServerKey,SenderId\n"key,with ""quotes""",\\N\n');
    });

    test('a student named by an import gets exactly its marks; others keep theirs; push is replaced', async () => {
      const db = await target.fresh();
      const store = await openStore(db.url);
      try {
        await store.importDataset({
          marks: [mark('a', 'x'), mark('b', 'x'), mark('a', 'y')],
          push: { ServerKey: 'k1', SenderId: 's1' },
        });
        const report = await store.importDataset({ marks: [mark('a', 'z', 'new')] });
        assert.deepEqual(report, { students: 0, devices: 0, marks: 1, push: 0 });
        assert.deepEqual(await store.marksOf('a', null), [mark('a', 'z', 'new')]);
        assert.deepEqual(await store.marksOf('b', null), [mark('b', 'x')]);
        assert.deepEqual(
          await store.pushSettings(),
          { ServerKey: 'k1', SenderId: 's1' },
          'a dataset without push leaves it alone',
        );
        // The streamed import follows the same rule, after the marks stored before.
        const csv = file('id_student,SubjectID,Note\nb,w,1\nc,w,2\nb,v,3\n', 'csv');
        assert.equal(
          (await sis('import', ['--table', 'marks', csv], db.url)).stdout,
          `imported 3 marks into ${redactDatabaseUrl(db.url)}\n`,
        );
        assert.deepEqual(
          (await store.marksOf('b', null)).map((m) => [m.SubjectID, m.Note, m.SubjectName]),
          [
            ['w', '1', null],
            ['v', '3', null],
          ],
        );
        assert.deepEqual(
          (await store.marksOf('b', 'v')).map((m) => m.Note),
          ['3'],
        );
        assert.deepEqual(
          (await store.marksOf('a', null)).map((m) => m.SubjectID),
          ['z'],
        );
        await sis('import', ['--table', 'push', file('SenderId\ns2\n', 'csv')], db.url);
        assert.deepEqual(await store.pushSettings(), { ServerKey: null, SenderId: 's2' });
        // --replace with a JSON file without marks or push: those stay; with them: replaced.
        await sis('import', ['--replace', file(JSON.stringify({ students: [] }))], db.url);
        assert.equal((await store.marksOf('c', null)).length, 1);
        assert.deepEqual(await store.pushSettings(), { ServerKey: null, SenderId: 's2' });
        const replaced = await sis('import', ['--replace', file(JSON.stringify({ marks: [mark('d', 'q')] }))], db.url);
        assert.match(
          replaced.stdout,
          /^imported 0 students, 0 devices and 1 mark into .*, replacing the previous students, devices and marks\n$/,
        );
        assert.deepEqual(await store.marksOf('c', null), []);
        assert.deepEqual(await store.pushSettings(), { ServerKey: null, SenderId: 's2' });
        await sis('import', ['--table', 'push', '--replace', file('ServerKey,SenderId\n', 'csv')], db.url);
        assert.equal(await store.pushSettings(), null, 'replaced by no row');
      } finally {
        await store.close();
      }
    });

    test('refused: characters XML forbids (record and field named), missing keys, a second push row, push as a list', async () => {
      const db = await target.fresh();
      const json = {
        marks: [
          mark('a', 'x'),
          { ...mark('a', 'y'), Note: 'bell\u0007' },
          { id_student: 'b', Mark: 'B' },
          { ...mark('c', 'x'), Grade: 'A' },
        ],
        push: { ServerKey: 'k\uffff', SenderId: 7 },
      };
      const streamed = await sis('import', [file(JSON.stringify(json, null, 1))], db.url);
      assert.equal(streamed.code, 1);
      for (const problem of [
        /line \d+: marks\[1\]\.Note: contains U\+0007, a character XML 1\.0 does not allow/,
        /line \d+: marks\[2\]\.SubjectID: required field is missing/,
        /line \d+: marks\[3\]\.Grade: unknown field; expected id_student, SubjectID, SubjectName, Mark, Term, MarkDate, Note/,
        /line \d+: push\.ServerKey: contains U\+FFFF, a character XML 1\.0 does not allow/,
        /line \d+: push\.SenderId: expected a string or null, found a number \(7\)/,
      ]) {
        assert.match(streamed.stderr, problem);
      }
      assert.match(streamed.stderr, /5 problems; nothing was imported\n$/);
      // The in-memory check (importDataset, demo data, tests) says the same.
      assert.throws(
        () => parseDataset(JSON.stringify(json)),
        (error: unknown) =>
          error instanceof DatasetError &&
          error.problems.includes('marks[1].Note: contains U+0007, a character XML 1.0 does not allow') &&
          error.problems.includes('push.ServerKey: contains U+FFFF, a character XML 1.0 does not allow'),
      );
      assert.throws(
        () => parseDataset('{"push": [{"ServerKey": "k"}]}'),
        /push: expected an object with ServerKey and SenderId, found an array/,
      );
      const pushList = await sis('import', [file('{"push": [{"ServerKey": "k"}]}')], db.url);
      assert.match(pushList.stderr, /push: expected an object with ServerKey and SenderId, found an array/);

      const csv = await sis(
        'import',
        ['--table', 'marks', file('id_student,SubjectID,Note\na,x,ok\na,,\u0001\n,\\N,x\n', 'csv')],
        db.url,
      );
      assert.match(csv.stderr, /line 3: Note: contains U\+0001, a character XML 1\.0 does not allow/);
      assert.match(csv.stderr, /line 4: SubjectID: expected a string, found null/);
      const noSubject = await sis('import', ['--table', 'marks', file('id_student,Note\na,x\n', 'csv')], db.url);
      assert.match(noSubject.stderr, /line 1: the header has no "SubjectID" column \(required\)/);
      const twoRows = await sis('import', ['--table', 'push', file('ServerKey,SenderId\na,b\nc,d\n', 'csv')], db.url);
      assert.match(twoRows.stderr, /line 3: the push table has one row; this is row 2/);
      const store = await openStore(db.url);
      try {
        assert.deepEqual(await store.marksOf('a', null), [], 'nothing was imported');
        assert.equal(await store.pushSettings(), null);
      } finally {
        await store.close();
      }
    });
  });
}

test('the examples import as they are', async () => {
  const db = await storeTargets[0]!.fresh();
  const example = join(repoRoot, 'examples', 'extended-dataset.json');
  assert.match(
    (await sis('import', [example], db.url)).stdout,
    /^imported 2 students, 0 devices, 4 marks and the push settings into /,
  );
  assert.match(
    (await sis('import', ['--table', 'marks', join(repoRoot, 'examples', 'marks.csv')], db.url)).stdout,
    /^imported 3 marks into /,
  );
  assert.match(
    (await sis('import', ['--table', 'push', join(repoRoot, 'examples', 'push.csv')], db.url)).stdout,
    /^imported the push settings into /,
  );
  const schema = JSON.parse(readFileSync(join(repoRoot, 'schema', 'dataset.schema.json'), 'utf8')) as {
    $defs: Record<string, { properties: Record<string, unknown>; required?: string[] }>;
  };
  assert.deepEqual(Object.keys(schema.$defs['mark']!.properties), [
    'id_student',
    'SubjectID',
    'SubjectName',
    'Mark',
    'Term',
    'MarkDate',
    'Note',
  ]);
  assert.deepEqual(schema.$defs['mark']!.required, ['id_student', 'SubjectID']);
  assert.deepEqual(Object.keys(schema.$defs['push']!.properties), ['ServerKey', 'SenderId']);
});
