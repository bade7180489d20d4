/** The import format: every validation rule, with the message an operator sees. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseDataset } from '../../src/dataset/parse-dataset.js';
import {
  DatasetError,
  findXmlForbiddenCharacter,
  MAX_LISTED_PROBLEMS,
  validateDataset,
} from '../../src/store/import/dataset-check.js';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { repoRoot } from '../helpers/test-server.js';

const repoFile = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');

/** The problems parseDataset reports for `text` (fails the test when it reports none). */
function problemsOf(text: string): readonly string[] {
  try {
    parseDataset(text, 'x.json');
  } catch (error) {
    assert.ok(error instanceof DatasetError, String(error));
    assert.equal(error.code, 'ERR_DATASET');
    return error.problems;
  }
  assert.fail(`accepted: ${text}`);
}

const one = (text: string): string => {
  const problems = problemsOf(text);
  assert.equal(problems.length, 1, problems.join('\n'));
  return problems[0]!;
};

describe('parseDataset: JSON syntax', () => {
  const cases: [string, string][] = [
    [
      '{\n  "students": [\n    {"id_student": "1"},\n  ]\n}',
      "line 4 column 3: Unexpected token ']', expected a JSON value",
    ],
    ['', 'line 1 column 1: Unexpected end of input, expected a JSON value'],
    ['{"students": [', 'line 1 column 15: Unexpected end of input, expected a JSON value'],
    ['{"devices": []} x', "line 1 column 17: Unexpected token 'x' after the end of the JSON value"],
    ["{'devices': []}", "line 1 column 2: Unexpected token ''', expected a member name in double quotes"],
    ['{"devices" []}', "line 1 column 12: Unexpected token '[', expected ':' after a member name"],
    [
      '{"devices": [] "students": []}',
      `line 1 column 16: Unexpected token '"', expected ',' or '}' after a member value`,
    ],
    [
      '{"devices": [{"id": "a"} {"id": "b"}]}',
      "line 1 column 26: Unexpected token '{', expected ',' or ']' after an array element",
    ],
    [
      '{"devices": [{"id": "a\nb"}]}',
      'line 1 column 23: Line break inside a string (unterminated string, or a line break that must be written \\n)',
    ],
    [
      '{"devices": [{"id": "a\u0001"}]}',
      'line 1 column 23: Control character U+0001 inside a string must be escaped as \\u0001',
    ],
    ['{"devices": [{"id": "a\\x"}]}', 'line 1 column 23: Invalid escape \\x in a string'],
    ['{"devices": [{"id": "\\u12G4"}]}', 'line 1 column 22: Invalid \\u escape: expected four hexadecimal digits'],
    ['{"devices": [{"id": "abc', 'line 1 column 21: Unterminated string'],
    ['{"devices": [{"id": 01}]}', "line 1 column 22: Unexpected token '1', expected ',' or '}' after a member value"],
    ['{"devices": [{"id": tru}]}', "line 1 column 21: Unexpected token 't', expected a JSON value"],
    ['{"é": 1, "devices": [\u00a0]}', 'line 1 column 22: Unexpected token U+00A0, expected a JSON value'],
    ['['.repeat(300), 'line 1 column 257: nesting deeper than 256 levels'],
  ];
  for (const [text, expected] of cases) {
    test(expected, () => assert.equal(one(text), expected));
  }

  test('the message names the file', () => {
    assert.throws(
      () => parseDataset('{', 'data/in.json'),
      (e: unknown) =>
        e instanceof DatasetError &&
        e.message.startsWith('data/in.json: 1 problem, nothing imported\n  line 1 column 2:'),
    );
  });

  test('a member name twice in one object', () => {
    const text = '{\n "devices": [\n  {"id": "a", "token": "1",\n   "token": "2"}\n ],\n "devices": []\n}';
    assert.deepEqual(problemsOf(text), [
      'line 4 column 4: member "token" appears twice in one object',
      'line 6 column 2: member "devices" appears twice in one object',
    ]);
  });
});

describe('parseDataset: records', () => {
  test('the example file is the demo dataset; a byte order mark is allowed', () => {
    const text = repoFile('examples/dataset.json');
    assert.deepEqual(parseDataset(text), DEMO_DATASET);
    assert.deepEqual(parseDataset(`\ufeff${text}`), DEMO_DATASET);
  });

  test('missing fields become null; empty strings and nulls are kept as they are', () => {
    const dataset = parseDataset(
      '{"students": [{"id_student": "", "fullName": "", "id_device": null}], "devices": [{"id": ""}]}',
    );
    assert.deepEqual(dataset, {
      students: [{ id_student: '', fullName: '', id_device: null, ShowActive: null, school_base_url: null }],
      devices: [{ id: '', token: null }],
    });
    assert.deepEqual(parseDataset('{}'), { students: [], devices: [] });
  });

  const cases: [string, string][] = [
    ['[]', '(top level): expected an object with "students", "devices", "marks" or "push" members, found an array'],
    ['null', '(top level): expected an object with "students", "devices", "marks" or "push" members, found null'],
    ['{"student": []}', 'student: unknown top-level member; expected "students", "devices", "marks" or "push"'],
    ['{"a b": 1}', '["a b"]: unknown top-level member; expected "students", "devices", "marks" or "push"'],
    ['{"students": {}}', 'students: expected an array, found an object'],
    ['{"devices": null}', 'devices: expected an array, found null'],
    ['{"devices": ["a"]}', 'devices[0]: expected an object, found a string'],
    ['{"devices": [{"id": "a", "tokn": "x"}]}', 'devices[0].tokn: unknown field; expected id, token'],
    ['{"devices": [{"id": "a", "__proto__": "x"}]}', 'devices[0].__proto__: unknown field; expected id, token'],
    [
      '{"students": [{"id_student": "1", "FullName": "x"}]}',
      'students[0].FullName: unknown field; expected id_student, fullName, id_device, ShowActive, school_base_url',
    ],
    ['{"students": [{"fullName": "x"}]}', 'students[0].id_student: required key is missing'],
    ['{"students": [{"id_student": null}]}', 'students[0].id_student: expected a string (the key), found null'],
    ['{"devices": [{"id": 7}]}', 'devices[0].id: expected a string (the key), found a number (7)'],
    [
      '{"students": [{"id_student": "1", "ShowActive": 1}]}',
      'students[0].ShowActive: expected a string or null, found a number (1)',
    ],
    [
      '{"students": [{"id_student": "1", "ShowActive": true}]}',
      'students[0].ShowActive: expected a string or null, found true',
    ],
    ['{"devices": [{"id": "1", "token": ["t"]}]}', 'devices[0].token: expected a string or null, found an array'],
    [
      '{"devices": [{"id": "a"}, {"id": "b"}, {"id": "a"}]}',
      'devices[2].id: duplicate key "a", first used by devices[0]',
    ],
    [
      '{"students": [{"id_student": ""}, {"id_student": ""}]}',
      'students[1].id_student: duplicate key "", first used by students[0]',
    ],
    [
      '{"students": [{"id_student": "1", "fullName": "a\\u0001"}]}',
      'students[0].fullName: contains U+0001, a character XML 1.0 does not allow',
    ],
    ['{"devices": [{"id": "\\u0000"}]}', 'devices[0].id: contains U+0000, a character XML 1.0 does not allow'],
  ];
  for (const [text, expected] of cases) {
    test(expected, () => assert.equal(one(text), expected));
  }

  test('the same key may be a student and a device', () => {
    parseDataset('{"students": [{"id_student": "1"}], "devices": [{"id": "1"}]}');
  });

  test('every problem is reported at once, up to a limit', () => {
    const text = JSON.stringify({
      students: [{ id_student: 1 }, { id_student: '2', fullName: 2 }],
      devices: [{ id: 'x', x: 1 }],
      extra: 1,
    });
    assert.deepEqual(problemsOf(text), [
      'extra: unknown top-level member; expected "students", "devices", "marks" or "push"',
      'students[0].id_student: expected a string (the key), found a number (1)',
      'students[1].fullName: expected a string or null, found a number (2)',
      'devices[0].x: unknown field; expected id, token',
    ]);
    const many = JSON.stringify({ devices: Array.from({ length: 120 }, () => ({ id: 5 })) });
    assert.throws(
      () => parseDataset(many, 'many.json'),
      (e: unknown) =>
        e instanceof DatasetError &&
        e.problems.length === MAX_LISTED_PROBLEMS &&
        e.totalProblems === 120 &&
        e.message.startsWith('many.json: 120 problems, nothing imported\n') &&
        e.message.endsWith('  ... and 70 more problems\n'),
    );
  });
});

describe('characters XML 1.0 forbids', () => {
  const forbidden: [string, string][] = [
    ['\u0000', 'U+0000'],
    ['\u0008', 'U+0008'],
    ['\u000b', 'U+000B'],
    ['\u000c', 'U+000C'],
    ['\u000e', 'U+000E'],
    ['\u001f', 'U+001F'],
    ['\ufffe', 'U+FFFE'],
    ['\uffff', 'U+FFFF'],
    ['x\ud800', 'U+D800'],
    ['\udbff y', 'U+DBFF'],
    ['\udc00', 'U+DC00'],
    ['a\udfffb', 'U+DFFF'],
    ['\ud800\ud800\udc00', 'U+D800'],
  ];
  for (const [text, name] of forbidden) {
    test(`${name} is refused in every string`, () => {
      assert.equal(findXmlForbiddenCharacter(`ok ${text} ok`), name);
      assert.equal(
        one(JSON.stringify({ devices: [{ id: 'k', token: text }] })),
        `devices[0].token: contains ${name}, a character XML 1.0 does not allow`,
      );
      assert.equal(
        one(JSON.stringify({ students: [{ id_student: text }] })),
        `students[0].id_student: contains ${name}, a character XML 1.0 does not allow`,
      );
      assert.throws(() => validateDataset({ devices: [{ id: 'k', token: text }] }), /devices\[0\]\.token: contains/);
    });
  }
  test('tab, line feed, carriage return, DEL, C1, private use, U+FFFD and astral characters are allowed', () => {
    const allowed = '\t\n\r\u007f\u0085\u009f\ue000\ufffd\ud800\udc00\u{10FFFF}\u{1F600}';
    assert.equal(findXmlForbiddenCharacter(allowed), null);
    assert.equal(
      parseDataset(JSON.stringify({ devices: [{ id: allowed, token: allowed }] })).devices![0]!.token,
      allowed,
    );
  });
});

describe('validateDataset', () => {
  test('returns a clean copy: missing and undefined fields are null, nothing else is added', () => {
    const input = { students: [{ id_student: 's', fullName: undefined, ShowActive: '' }] };
    assert.deepEqual(validateDataset(input), {
      students: [{ id_student: 's', fullName: null, id_device: null, ShowActive: '', school_base_url: null }],
      devices: [],
    });
  });
  test('refuses what parseDataset refuses', () => {
    assert.throws(() => validateDataset('text'), /\(top level\): expected an object/);
    assert.throws(
      () => validateDataset({ devices: [{ id: 'a' }, { id: 'a' }] }, 'code'),
      /^DatasetError: code: 1 problem/,
    );
  });
});

test('schema/dataset.schema.json describes the same records', () => {
  const schema = JSON.parse(repoFile('schema/dataset.schema.json')) as {
    $schema: string;
    $defs: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
  };
  assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.deepEqual(Object.keys(schema.$defs['student']!.properties!), Object.keys(DEMO_DATASET.students![0]!));
  assert.deepEqual(Object.keys(schema.$defs['device']!.properties!), Object.keys(DEMO_DATASET.devices![0]!));
  assert.deepEqual(schema.$defs['student']!.required, ['id_student']);
  assert.deepEqual(schema.$defs['device']!.required, ['id']);
});
