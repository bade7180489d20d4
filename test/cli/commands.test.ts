/**
 * The admin CLI in process, on both stores: every command's output and exit status, the
 * import/export round trip in both formats (byte for byte), dry runs, usage errors and help.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createDevicesCommand } from '../../src/cli/devices-command.js';
import { createExportCommand } from '../../src/cli/export-command.js';
import { createImportCommand } from '../../src/cli/import-command.js';
import { createMigrateCommand } from '../../src/cli/migrate-command.js';
import { LATEST_SCHEMA_VERSION, migrations } from '../../src/store/schema/migration-list.js';
import type { CommandOutput } from '../../src/cli/output.js';
import { createSchoolsCommand, createStatsCommand, createStudentsCommand } from '../../src/cli/report-commands.js';
import type { Command } from '../../src/cli/command.js';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { redactDatabaseUrl } from '../../src/store/open/database-url.js';
import { cleanupTargets, sqliteTarget, postgresTarget, storeTargets } from '../helpers/store-targets.js';
import type { FreshDatabase } from '../helpers/store-targets.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-cli-'));
after(async () => {
  await cleanupTargets();
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

type Factory = (output: CommandOutput) => Command;
const COMMANDS: Readonly<Record<string, Factory>> = {
  import: (o) => createImportCommand(o),
  export: createExportCommand,
  stats: createStatsCommand,
  schools: createSchoolsCommand,
  students: createStudentsCommand,
  devices: createDevicesCommand,
  migrate: createMigrateCommand,
};

/** Runs `sis NAME ARGS` in process with `env`; stderr may pretend to be a terminal. */
async function sis(
  name: string,
  args: readonly string[],
  env: Record<string, string>,
  options: { tty?: boolean; stdin?: string } = {},
): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const output: CommandOutput = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: options.tty === true, columns: 100 },
  };
  const command =
    name === 'import' && options.stdin !== undefined
      ? createImportCommand(
          output,
          (async function* () {
            yield Buffer.from(options.stdin!, 'utf8');
          })(),
        )
      : COMMANDS[name]!(output);
  const code = await command.run(args, env);
  return { code, stdout, stderr };
}

let counter = 0;
function file(content: string, ext = 'json'): string {
  const path = join(dir, `f-${++counter}.${ext}`);
  writeFileSync(path, content);
  return path;
}

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
      const out = join(dir, `export-${++counter}.csv`);
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

describe('sis import: checking and reporting', () => {
  test('--dry-run reports every problem with its line, writes nothing, does not open the database', async () => {
    const db = await sqliteTarget.fresh();
    const rows = Array.from({ length: 60 }, (_, i) => `d${i % 30},${i % 7 === 0 ? 'bad\u0001' : 'ok'}`);
    const csv = file(`id,token\n${rows.join('\n')}\n`, 'csv');
    const result = await sis('import', ['--dry-run', '--table', 'devices', csv], { SIS_DATABASE_URL: db.url });
    assert.equal(result.code, 1);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.at(-1), `sis import: ${csv}: 39 problems (dry run: nothing was written)`);
    assert.equal(lines.length, 40, 'all of them, beyond the 50 a real import lists');
    assert.equal(lines[0], '  line 2: token: contains U+0001, a character XML 1.0 does not allow');
    assert.equal(lines[9], '  line 32: id: duplicate key "d0", first used on line 2');
    assert.equal(existsSync(db.url.slice('sqlite:'.length)), false);
    const valid = await sis('import', ['--dry-run', file(JSON.stringify(DEMO_DATASET))], {});
    assert.deepEqual(valid, {
      code: 0,
      stdout: `${join(dir, `f-${counter}.json`)}: valid, 5 students and 5 devices (dry run: nothing was written)\n`,
      stderr: '',
    });
  });

  test('a progress bar on a terminal, nothing otherwise', async () => {
    const db = await sqliteTarget.fresh();
    const big = file(
      JSON.stringify({ devices: Array.from({ length: 20_000 }, (_, i) => ({ id: `d${i}`, token: `t${i}` })) }),
    );
    const tty = await sis('import', [big], { SIS_DATABASE_URL: db.url }, { tty: true });
    assert.equal(tty.code, 0);
    const CLEAR = '\r\x1b[K'; // back to the line's start, erase it
    assert.ok(tty.stderr.startsWith(CLEAR));
    assert.match(
      tty.stderr.slice(CLEAR.length),
      /^importing f-\d+\.json {2}\[[#-]{24}\] +\d+% {2}[\d,]+ rows {2}[\d.]+ s\r/,
    );
    assert.match(tty.stderr, /checking keys\.\.\. {2}20,000 rows/);
    assert.match(tty.stderr, /writing\.\.\./);
    assert.ok(tty.stderr.endsWith(CLEAR), 'the line is cleared at the end');
    assert.equal((await sis('import', [big], { SIS_DATABASE_URL: db.url })).stderr, '');

    // An export counts the rows it writes; with --output, or with standard output not a terminal.
    const out = join(dir, `export-${++counter}.json`);
    const exported = await sis('export', ['--output', out], { SIS_DATABASE_URL: db.url }, { tty: true });
    assert.equal(exported.code, 0, exported.stderr);
    assert.ok(exported.stderr.startsWith(CLEAR));
    assert.match(exported.stderr.slice(CLEAR.length), /^exporting to .*export-\d+\.json {2}[\d,]+ rows {2}[\d.]+ s/);
    assert.ok(exported.stderr.endsWith(CLEAR));
    assert.equal((await sis('export', [], { SIS_DATABASE_URL: db.url })).stderr, '');
  });

  test('usage errors exit 2 with the usage; --help exits 0, for every command', async () => {
    for (const [name, args, message] of [
      ['import', ['x.csv'], 'a CSV file holds one table: name it with --table students|devices|marks|push'],
      [
        'import',
        ['--format', 'json', '--table', 'students', 'x'],
        '--table is for CSV files; a JSON file names its tables itself',
      ],
      ['import', ['--format', 'xml', 'x'], '--format must be json or csv, not "xml"'],
      ['import', ['--table'], '--table needs a value'],
      [
        'import',
        ['--null', 'a,b', '--table', 'devices', 'x'],
        'the null marker "a,b" must not contain a comma, a double quote or a line break',
      ],
      ['export', ['--format', 'csv'], 'a CSV file holds one table: name it with --table students|devices|marks|push'],
      ['export', ['extra'], 'unexpected argument "extra"'],
      ['export', ['--replace'], 'unknown option --replace'],
      ['stats', ['--verbose'], 'unknown option --verbose'],
      ['schools', ['x'], 'unexpected argument "x"'],
      ['students', [], 'missing --school URL'],
      ['students', ['--school', 'a', '--school', 'b'], '--school given twice'],
      ['devices', [], 'missing the action: get, set or remove'],
      ['devices', ['list'], 'unknown action "list"; expected get, set or remove'],
      ['devices', ['get'], 'missing the device ID'],
      ['devices', ['set', 'x'], 'missing the TOKEN (or --null)'],
      ['devices', ['get', 'x', 'y'], 'too many arguments for get'],
      ['devices', ['remove', 'x', '--null'], '--null is for set'],
      ['migrate', ['now'], 'unexpected argument "now"'],
    ] as const) {
      const result = await sis(name, args, {});
      const usage = COMMANDS[name]!({ stdout: { write: () => 0 }, stderr: { write: () => 0 } }).usage;
      assert.deepEqual(
        result,
        { code: 2, stdout: '', stderr: `sis ${name}: ${message}\n\n${usage}` },
        `${name} ${args.join(' ')}`,
      );
    }
    for (const name of Object.keys(COMMANDS)) {
      const help = await sis(name, ['--help'], {});
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`^Usage: sis ${name}`));
      assert.match(help.stdout, /Exit status: 0 /);
    }
  });

  test('store settings from the environment are checked with the configuration', async () => {
    const result = await sis('stats', [], { SIS_DATABASE_POOL_SIZE: 'many', PORT: 'x' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^sis stats: Invalid configuration:\n/);
    assert.match(result.stderr, /PORT="x"/);
    assert.match(result.stderr, /SIS_DATABASE_POOL_SIZE="many": expected a whole number from 1 to 1000/);
  });
});

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
