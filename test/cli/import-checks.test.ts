/**
 * The admin CLI in process, checking and reporting: `sis import --dry-run` listing every problem,
 * the progress bar of import and export on a terminal, usage errors and --help for every command,
 * and store settings checked with the configuration.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { COMMANDS, counter, dir, file, nextNumber, sis } from '../helpers/sis-commands.js';
import { sqliteTarget } from '../helpers/store-targets.js';

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
    const out = join(dir, `export-${nextNumber()}.json`);
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
    assert.equal(
      result.stderr
        .split('\n')
        .filter((l) => l.includes('SIS_DATABASE_POOL_SIZE="many": expected a whole number from 1 to 1000')).length,
      1,
      "named once: the bounds are the settings table's alone",
    );
  });
});
