/** `sis import`, end to end in process: arguments, files, output, exit codes, the database it fills. */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { createImportCommand, importCommand } from '../../src/cli/import-command.js';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { openStore } from '../../src/store/open/open-store.js';
import { repoRoot } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-import-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const example = join(repoRoot, 'examples', 'dataset.json');
let counter = 0;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const command = createImportCommand({
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  const code = await command.run(args, env);
  return { code, stdout, stderr };
}

/** A file in the temporary directory holding `content` (a string, or a value written as JSON). */
function file(content: unknown): string {
  const path = join(dir, `in-${++counter}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function freshDatabase(): { url: string; path: string } {
  const path = join(dir, `db-${++counter}`, 'nested', 'sis.db');
  return { url: `sqlite:${path}`, path };
}

describe('sis import', () => {
  test('the exported command', () => {
    assert.equal(importCommand.name, 'import');
    assert.match(importCommand.summary, /dataset/);
    assert.match(importCommand.usage, /^Usage: sis import \[options\] FILE\n/);
  });

  test('imports the example into a database that does not exist yet', async () => {
    const db = freshDatabase();
    const result = await run([example], { SIS_DATABASE_URL: db.url });
    assert.deepEqual(result, { code: 0, stdout: `imported 5 students and 5 devices into ${db.url}\n`, stderr: '' });
    const store = await openStore(db.url);
    assert.deepEqual(await store.studentsOfSchool('http://school-b.example', '0'), [DEMO_DATASET.students![4]]);
    assert.equal(await store.deviceToken('ws'), '  padded  \r\n  text\t');
    await store.close();
  });

  test('upserts by default and replaces with --replace', async () => {
    const db = freshDatabase();
    const env = { SIS_DATABASE_URL: db.url };
    assert.equal((await run([example], env)).code, 0);
    const one = file({
      students: [{ id_student: 'new', ShowActive: '1', school_base_url: 'http://school-a.example' }],
      devices: [{ id: 'x', token: 'y' }],
    });
    assert.equal((await run([one], env)).stdout, `imported 1 student and 1 device into ${db.url}\n`);
    let store = await openStore(db.url);
    assert.deepEqual(
      (await store.studentsOfSchool('http://school-a.example', '1')).map((s) => s.id_student),
      ['1', '2', 'new'],
    );
    await store.close();

    const replaced = await run(['--replace', one], env);
    assert.equal(replaced.code, 0);
    assert.equal(
      replaced.stdout,
      `imported 1 student and 1 device into ${db.url}, replacing the previous students and devices\n`,
    );
    store = await openStore(db.url);
    assert.deepEqual(
      (await store.studentsOfSchool('http://school-a.example', '1')).map((s) => s.id_student),
      ['new'],
    );
    assert.equal(await store.deviceToken('1'), null);
    await store.close();
  });

  test('an invalid file: every problem on stderr with its line, exit 1, nothing written', async () => {
    const db = freshDatabase();
    const bad = file({
      students: [{ id_student: '1', fullName: 'ok' }, { id_student: '2', fullName: 'a\u0001' }, { id_student: '1' }],
      devices: [{ id: 'd', token: 3 }],
    });
    const result = await run([bad], { SIS_DATABASE_URL: db.url });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    // Problems stream as they are found (duplicate keys once the whole file is read), the count last.
    assert.equal(
      result.stderr,
      '  line 1: students[1].fullName: contains U+0001, a character XML 1.0 does not allow\n' +
        '  line 1: devices[0].token: expected a string or null, found a number (3)\n' +
        '  line 1: students[2].id_student: duplicate key "1", first used by students[0] on line 1\n' +
        `sis import: ${bad}: 3 problems; nothing was imported\n`,
    );
    // The database is opened (and migrated) before the file is read, so it exists, but holds nothing.
    const store = await openStore(db.url);
    assert.equal(await store.isEmpty(), true);
    await store.close();
  });

  test('an invalid file leaves an existing database as it was', async () => {
    const db = freshDatabase();
    const env = { SIS_DATABASE_URL: db.url };
    await run([example], env);
    const bad = file({
      students: [{ id_student: 'z' }],
      devices: [
        { id: 'esc', token: null },
        { id: 'q', token: '\uffff' },
      ],
    });
    assert.equal((await run(['--replace', bad], env)).code, 1);
    const store = await openStore(db.url);
    assert.equal(await store.deviceToken('esc'), DEMO_DATASET.devices![2]!.token);
    assert.equal((await store.studentsOfSchool('http://school-a.example', '1')).length, 2);
    await store.close();
  });

  test('bad JSON names the line and column', async () => {
    const bad = file('{\n  "devices": [\n    {"id": "a"},\n  ]\n}\n');
    const result = await run([bad], { SIS_DATABASE_URL: freshDatabase().url });
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `  line 4 column 3: Unexpected token ']', expected a JSON value\nsis import: ${bad}: 1 problem; nothing was imported\n`,
    );
  });

  test('many problems: the first 50 and a count of the rest', async () => {
    const bad = file({ devices: Array.from({ length: 75 }, (_, i) => ({ id: `d${i}`, token: i })) });
    const result = await run([bad], { SIS_DATABASE_URL: freshDatabase().url });
    assert.equal(result.code, 1);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 50 + 1 + 1);
    assert.equal(lines[0], '  line 1: devices[0].token: expected a string or null, found a number (0)');
    assert.equal(lines.at(-2), '  ... and 25 more problems');
    assert.equal(lines.at(-1), `sis import: ${bad}: 75 problems; nothing was imported`);
  });

  test('a file that is not UTF-8, a missing file, a directory', async () => {
    const env = { SIS_DATABASE_URL: freshDatabase().url };
    const latin1 = join(dir, 'latin1.json');
    writeFileSync(latin1, Buffer.from('{"devices": [{"id": "caf\xe9"}]}', 'latin1'));
    assert.deepEqual(await run([latin1], env), {
      code: 1,
      stdout: '',
      stderr: `sis import: ${latin1}: the file is not valid UTF-8 text (near byte 24); nothing was imported\n`,
    });
    const missing = join(dir, 'missing.json');
    assert.deepEqual(await run([missing], env), {
      code: 1,
      stdout: '',
      stderr: `sis import: cannot read ${missing}: no such file\n`,
    });
    assert.deepEqual(await run([dir], env), {
      code: 1,
      stdout: '',
      stderr: `sis import: cannot read ${dir}: is a directory\n`,
    });
  });

  test('usage errors exit 2 with the usage text; --help exits 0', async () => {
    for (const [args, message] of [
      [[], 'missing the dataset file'],
      [['a.json', 'b.json'], 'one dataset file expected, got 2'],
      [['--force', 'a.json'], 'unknown option --force'],
    ] as const) {
      const result = await run(args, {});
      assert.equal(result.code, 2, message);
      assert.equal(result.stdout, '');
      assert.equal(result.stderr, `sis import: ${message}\n\n${importCommand.usage}`);
    }
    for (const help of ['--help', '-h']) {
      assert.deepEqual(await run(['x.json', help], {}), { code: 0, stdout: importCommand.usage, stderr: '' });
    }
  });

  test('CSV from a spreadsheet: a byte order mark, CRLF line ends, line breaks and quotes inside quoted fields', async () => {
    const db = freshDatabase();
    const csv = join(dir, 'excel.csv');
    writeFileSync(csv, '\ufeffid,token\r\n"a\r\nb",x\r\nc,"say ""hi"",\nthen\r\nbye"\r\n\r\n"\\N",\\N\r\n');
    const result = await run(['--table', 'devices', csv], { SIS_DATABASE_URL: db.url });
    assert.deepEqual(result, { code: 0, stdout: `imported 3 devices into ${db.url}\n`, stderr: '' });
    const store = await openStore(db.url);
    assert.equal(await store.deviceToken('a\r\nb'), 'x');
    assert.equal(await store.deviceToken('c'), 'say "hi",\nthen\r\nbye');
    assert.equal(await store.deviceToken('\\N'), null, 'a quoted \\N is text; an unquoted one is null');
    await store.close();
  });

  test('a file named like an option after --', async () => {
    const db = freshDatabase();
    const odd = join(dir, '--odd.json');
    copyFileSync(example, odd);
    const result = await run(['--replace', '--', odd], { SIS_DATABASE_URL: db.url });
    assert.equal(result.code, 0, result.stderr);
  });

  test('the default database is sqlite:./data/sis.db, relative to the working directory', async () => {
    const cwd = process.cwd();
    const work = join(dir, 'cwd');
    mkdirSync(work);
    process.chdir(work);
    try {
      const result = await run([example], {});
      assert.equal(result.stdout, 'imported 5 students and 5 devices into sqlite:./data/sis.db\n');
      assert.equal(existsSync(join(work, 'data', 'sis.db')), true);
    } finally {
      process.chdir(cwd);
    }
  });

  test('configuration and database errors exit 1 with a message', async () => {
    const bad = await run([example], { SIS_DATABASE_URL: 'mysql://u:secret@h/db' });
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /^sis import: [^]*mysql:\/\/u:\*\*\*@h\/db: unsupported database URL scheme "mysql:"; use sqlite:PATH or postgres:\/\/\.\.\.\n$/,
    );
    // Not tried again (SIS_COMMAND_RETRY_MS=0; read-only-writes.test.ts has the retries): the one line at once.
    const down = await run([example], {
      SIS_DATABASE_URL: 'postgres://u:secret@127.0.0.1:1/db',
      SIS_COMMAND_RETRY_MS: '0',
    });
    assert.equal(down.code, 1);
    assert.match(
      down.stderr,
      /^sis import: postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db: .*ECONNREFUSED.*; nothing was imported\n$/,
    );
    const config = await run([example], { SIS_DATABASE_URL: freshDatabase().url, PORT: 'eighty' });
    assert.equal(config.code, 1);
    assert.match(config.stderr, /^sis import: Invalid configuration:\n {2}- PORT="eighty": expected a whole number/);
  });

  test('into PostgreSQL (SIS_TEST_POSTGRES_URL)', async (t) => {
    const url = process.env['SIS_TEST_POSTGRES_URL'];
    if (url === undefined || url === '') return t.skip('SIS_TEST_POSTGRES_URL not set: PostgreSQL tests skipped');
    const schema = `sis_test_${process.pid}_cli_${Math.random().toString(36).slice(2, 8)}`;
    const target = `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
    try {
      const result = await run([example], { SIS_DATABASE_URL: target });
      assert.deepEqual(result, { code: 0, stdout: `imported 5 students and 5 devices into ${target}\n`, stderr: '' });
      const store = await openStore(target);
      assert.equal(await store.deviceToken('2'), 'tok-BBB-222');
      await store.close();
    } finally {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
  });
});
