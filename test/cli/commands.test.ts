/**
 * The admin CLI in process, on both stores: every command's output and exit status, the
 * import/export round trip in both formats (byte for byte, SQLite to PostgreSQL too), imports from
 * files and standard input. Dry runs, progress, usage errors and help: import-checks.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { redactDatabaseUrl } from '../../src/store/open/database-url.js';
import { LATEST_SCHEMA_VERSION, migrations } from '../../src/store/schema/migration-list.js';
import { dir, file, nextNumber, sis } from '../helpers/sis-commands.js';
import { sqliteTarget, postgresTarget, storeTargets } from '../helpers/store-targets.js';
import type { FreshDatabase } from '../helpers/store-targets.js';

/** Values that test quoting and escaping in both formats. */
const TRICKY = {
  students: [
    ...DEMO_DATASET.students!,
    {
      id_student: 'q',
      fullName: 'a,b "c" \r\n d\te',
      id_device: '\\N',
      ShowActive: ' ',
      school_base_url: 'http://school-a.example',
    },
    { id_student: ' lead', fullName: null, id_device: null, ShowActive: null, school_base_url: null },
    {
      id_student: '\u{1F600}',
      fullName: '',
      id_device: ',',
      ShowActive: '"',
      school_base_url: 'http://school-b.example',
    },
  ],
  devices: [
    ...DEMO_DATASET.devices!,
    { id: 'nul', token: null },
    { id: 'N', token: '\\N' },
    { id: 'comma,id', token: 'x\ny' },
  ],
};

for (const target of storeTargets) {
  describe(`sis commands on ${target.name}`, () => {
    if (target.skip !== null) {
      test(target.name, (t) => t.skip(target.skip!));
      return;
    }

    test('migrate; read-only commands refuse a database that was never migrated', async () => {
      const db = await target.fresh();
      const env = { SIS_DATABASE_URL: db.url };
      const shown = redactDatabaseUrl(db.url);
      const stats = await sis('stats', [], env);
      assert.equal(stats.code, 1);
      assert.match(stats.stderr, /run `sis migrate` \(or start the service\) first\n$/);
      if (target.name === 'SQLite')
        assert.equal(existsSync(db.url.slice('sqlite:'.length)), false, 'not created by a read');
      assert.deepEqual(await sis('migrate', [], env), {
        code: 0,
        stdout: `${shown}: applied migrations ${migrations.map((m) => m.version).join(', ')} (schema version ${LATEST_SCHEMA_VERSION})\n`,
        stderr: '',
      });
      assert.deepEqual(await sis('migrate', [], env), {
        code: 0,
        stdout: `${shown} is up to date (schema version ${LATEST_SCHEMA_VERSION})\n`,
        stderr: '',
      });
      assert.equal((await sis('stats', [], env)).code, 0);
    });

    test('stats, schools, students, devices', async () => {
      const db = await target.fresh();
      const env = { SIS_DATABASE_URL: db.url };
      assert.equal((await sis('import', [file(JSON.stringify(DEMO_DATASET))], env)).code, 0);
      assert.deepEqual(await sis('stats', [], env), {
        code: 0,
        stdout: `database\t${redactDatabaseUrl(db.url)}\nschema_version\t${LATEST_SCHEMA_VERSION}\nstudents\t5\ndevices\t5\nauth_codes\t0\nschools\t2\n`,
        stderr: '',
      });
      assert.deepEqual(await sis('schools', [], env), {
        code: 0,
        stdout: 'students\tactive\tschool_base_url\n3\t2\thttp://school-a.example\n2\t1\thttp://school-b.example\n',
        stderr: '',
      });
      const b = await sis('students', ['--school', 'http://school-b.example'], env);
      assert.deepEqual(b, {
        code: 0,
        stdout:
          'id_student,fullName,id_device,ShowActive,school_base_url\n10,Plain Name,\\N,1,http://school-b.example\n11,,,0,http://school-b.example\n',
        stderr: '',
      });
      const active = await sis('students', ['--school=http://school-a.example', '--active', '0'], env);
      assert.equal(active.stdout.split('\n')[1], '3,\u0639\u0644\u064a,dev-003,0,http://school-a.example');
      assert.equal(
        (await sis('students', ['--school', 'http://nowhere'], env)).stdout,
        'id_student,fullName,id_device,ShowActive,school_base_url\n',
      );

      assert.deepEqual(await sis('devices', ['get', 'ws'], env), {
        code: 0,
        stdout: '"  padded  \\r\\n  text\\t"\n',
        stderr: '',
      });
      assert.deepEqual(await sis('devices', ['get', 'nope'], env), {
        code: 1,
        stdout: '',
        stderr: `sis devices: no device "nope" in ${redactDatabaseUrl(db.url)}\n`,
      });
      assert.deepEqual(await sis('devices', ['set', 'new', 'tok en'], env), {
        code: 0,
        stdout: 'created device "new"\n',
        stderr: '',
      });
      assert.deepEqual(await sis('devices', ['set', 'new', '--null'], env), {
        code: 0,
        stdout: 'updated device "new"\n',
        stderr: '',
      });
      assert.equal((await sis('devices', ['get', 'new'], env)).stdout, 'null\n');
      const bad = await sis('devices', ['set', 'new', 'a\u0007'], env);
      assert.deepEqual(bad, {
        code: 1,
        stdout: '',
        stderr: 'sis devices: token: contains U+0007, a character XML 1.0 does not allow; nothing was changed\n',
      });
      assert.deepEqual(await sis('devices', ['remove', 'new'], env), {
        code: 0,
        stdout: 'removed device "new"\n',
        stderr: '',
      });
      assert.equal((await sis('devices', ['remove', 'new'], env)).code, 1);
    });

    test('export then import gives the same bytes: JSON, and CSV per table with either null marker', async () => {
      const first = await target.fresh();
      assert.equal((await sis('import', [file(JSON.stringify(TRICKY))], { SIS_DATABASE_URL: first.url })).code, 0);
      const cases: [string, string[]][] = [
        ['json', []],
        ['json', ['--table', 'devices']],
        ['csv', ['--format', 'csv', '--table', 'students']],
        ['csv', ['--table', 'devices', '--format', 'csv']],
        ['csv', ['--format', 'csv', '--table', 'students', '--null', '']],
      ];
      for (const [ext, args] of cases) {
        const exported = await sis('export', args, { SIS_DATABASE_URL: first.url });
        assert.equal(exported.code, 0, exported.stderr);
        const second = await target.fresh();
        const nullArgs = args.includes('--null') ? ['--null', ''] : [];
        const tableArgs = ext === 'csv' ? ['--table', args[args.indexOf('--table') + 1]!] : [];
        const imported = await sis('import', [...tableArgs, ...nullArgs, file(exported.stdout, ext)], {
          SIS_DATABASE_URL: second.url,
        });
        assert.equal(imported.code, 0, imported.stderr);
        const again = await sis('export', args, { SIS_DATABASE_URL: second.url });
        assert.equal(again.stdout, exported.stdout, `${args.join(' ')}: the same bytes`);
      }
      // And the content is the dataset's: students in import order, devices by id.
      const exported = JSON.parse((await sis('export', [], { SIS_DATABASE_URL: first.url })).stdout) as typeof TRICKY;
      assert.deepEqual(exported.students, TRICKY.students);
      assert.deepEqual(
        exported.devices.map((d) => d.id),
        TRICKY.devices.map((d) => d.id).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
      );
    });

    test('export --output: written whole under its name; a file that cannot be written is an error', async () => {
      const db = await target.fresh();
      const env = { SIS_DATABASE_URL: db.url };
      await sis('import', [file(JSON.stringify(DEMO_DATASET))], env);
      const out = join(dir, `export-${nextNumber()}.csv`);
      const result = await sis('export', ['--table', 'students', '--output', out], env);
      assert.deepEqual(result, {
        code: 0,
        stdout: `exported 5 students from ${redactDatabaseUrl(db.url)} to ${out}\n`,
        stderr: '',
      });
      assert.match(readFileSync(out, 'utf8'), /^id_student,fullName,id_device,ShowActive,school_base_url\n1,/);
      const missing = join(dir, 'no', 'such', 'dir', 'x.json');
      const failed = await sis('export', ['--output', missing], env);
      assert.equal(failed.code, 1);
      assert.match(failed.stderr, /^sis export: cannot write .*x\.json: ENOENT/);
    });

    test('CSV import with --replace replaces that table only; JSON and CSV from standard input', async () => {
      const db = await target.fresh();
      const env = { SIS_DATABASE_URL: db.url };
      await sis('import', [file(JSON.stringify(DEMO_DATASET))], env);
      const result = await sis('import', ['--table', 'devices', '--replace', file('id,token\nx,y\n', 'csv')], env);
      assert.match(result.stdout, /^imported 1 device into .*, replacing the previous devices\n$/);
      assert.equal((await sis('devices', ['get', '1'], env)).code, 1);
      assert.equal((await sis('stats', [], env)).stdout.split('\n')[2], 'students\t5');
      const piped = await sis('import', ['--table', 'students', '-'], env, {
        stdin: 'id_student,fullName\nnew,From a pipe\n',
      });
      assert.match(piped.stdout, /^imported 1 student into /);
      const json = await sis('import', ['-'], env, { stdin: '{"devices": [{"id": "p", "token": "q"}]}' });
      assert.match(json.stdout, /^imported 0 students and 1 device into /);
    });
  });
}

describe('across stores', () => {
  test('SQLite export → PostgreSQL import → export: the same bytes', async (t) => {
    if (postgresTarget.skip !== null) return t.skip(postgresTarget.skip);
    const from: FreshDatabase = await sqliteTarget.fresh();
    const to: FreshDatabase = await postgresTarget.fresh();
    await sis('import', [file(JSON.stringify(TRICKY))], { SIS_DATABASE_URL: from.url });
    const exported = await sis('export', [], { SIS_DATABASE_URL: from.url });
    assert.equal((await sis('import', [file(exported.stdout)], { SIS_DATABASE_URL: to.url })).code, 0);
    assert.equal((await sis('export', [], { SIS_DATABASE_URL: to.url })).stdout, exported.stdout);
  });
});
