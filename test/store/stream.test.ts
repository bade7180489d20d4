/**
 * The streamed readers on their own: JSON and CSV give the same rows and problems whatever the
 * chunking, report where things are in the whole file, and agree with the in-memory parser.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CsvParser, csvLine, csvSource, checkNullMarker } from '../../src/dataset/csv.js';
import { jsonDatasetSource } from '../../src/dataset/json-stream.js';
import { MAX_VALUE_CHARS } from '../../src/dataset/json-stream.js';
import { parseDataset } from '../../src/dataset/parse-dataset.js';
import { decodeUtf8, InvalidUtf8Error } from '../../src/dataset/utf8.js';
import { DatasetError } from '../../src/store/import/dataset-check.js';
import type { ImportItem, ImportSource } from '../../src/store/import/import-items.js';
import type { TableName } from '../../src/store/import/record-check.js';

async function* chunks(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function collect(source: ImportSource): Promise<{ rows: ImportItem[]; problems: string[] }> {
  const rows: ImportItem[] = [];
  const problems: string[] = [];
  for await (const batch of source.items) {
    for (const item of batch) {
      if (item.kind === 'problem') problems.push(item.message);
      else rows.push(item);
    }
  }
  return { rows, problems };
}

const json = (text: string, size = text.length || 1) => collect(jsonDatasetSource(chunks(text, size)));
const csv = (text: string, table: TableName = 'devices', size = text.length || 1, nullMarker?: string) =>
  collect(csvSource(chunks(text, size), table, nullMarker));

/** Chunk sizes that cut every token somewhere: one character, odd small sizes, and whole. */
const SIZES = [1, 2, 3, 5, 7, 16, 1000];

const SAMPLE = `\ufeff{
  "students": [
    {"id_student": "1", "fullName": "O'Brien \\"&\\" <Sons> \\u00e9 \u{1F600}", "id_device": null, "ShowActive": "1", "school_base_url": "http://a"},
    {"id_student": "2"}, {"fullName": "no key"},
    {"id_student": "3", "ShowActive": 1, "extra": true, "id_student": "dup"}
  ],
  "unknown": [1, {"a": [2]}, "x"],
  "devices": [ {"id": "d", "token": "t\\u0001"}, {"id": "e", "token": ""} ]
}
`;

describe('streamed JSON dataset', () => {
  test('the same rows and problems whatever the chunk size', async () => {
    const whole = await json(SAMPLE);
    assert.deepEqual(whole.problems, [
      'line 4: students[2].id_student: required key is missing',
      'line 5 column 57: member "id_student" appears twice in one object',
      'line 5: students[3].extra: unknown field; expected id_student, fullName, id_device, ShowActive, school_base_url',
      'line 5: students[3].ShowActive: expected a string or null, found a number (1)',
      'unknown: unknown top-level member; expected "students", "devices", "marks" or "push"',
      'line 8: devices[0].token: contains U+0001, a character XML 1.0 does not allow',
    ]);
    assert.deepEqual(
      whole.rows.map((r) => (r.kind === 'row' ? [r.table, r.ord, r.line, Object.values(r.record)[0]] : null)),
      [
        ['students', 0, 3, '1'],
        ['students', 1, 4, '2'],
        ['students', 3, 5, '3'],
        ['devices', 0, 8, 'd'],
        ['devices', 1, 8, 'e'],
      ],
    );
    const first = whole.rows[0]!;
    assert.equal(
      first.kind === 'row' && first.table === 'students' ? first.record.fullName : '',
      'O\'Brien "&" <Sons> \u00e9 \u{1F600}',
    );
    for (const size of SIZES) assert.deepEqual(await json(SAMPLE, size), whole, `chunks of ${size}`);
  });

  test('syntax errors: the same words and place as the in-memory parser, at any chunk size', async () => {
    const long = `{"devices": [${Array.from({ length: 3000 }, (_, i) => `{"id": "d${i}"}`).join(', ')}, {"id": 1x}]}`;
    for (const doc of [
      '{\n  "devices": [\n    {"id": "a"},\n  ]\n}\n',
      '',
      '{"students": [',
      '{"students": []} x',
      "{'a': 1}",
      '{"students" []}',
      '{"students": [] "devices": []}',
      '{"devices": [{"id": "a"} {"id": "b"}]}',
      '{"devices": [{"id": "\\u12"}]}',
      '{"devices": [{"id": "a\nb"}]}',
      '{"devices": [{"id": tru}]}',
      '{"devices": [{"id": "\u{1F600}\u{1F600}" x}]}',
      '{"devices": [{"id": -}]}',
      '{"devices": [{"id": 1.}]}',
      '{"devices": [{"id": "a"}',
      long,
    ]) {
      let expected: string;
      try {
        parseDataset(doc);
        assert.fail(`expected ${JSON.stringify(doc)} to be refused`);
      } catch (error) {
        assert.ok(error instanceof DatasetError);
        expected = error.problems.at(-1)!;
      }
      for (const size of doc === long ? [64, 100_000] : [1, 3, 64, 100_000]) {
        const { problems } = await json(doc, size);
        assert.equal(problems.at(-1), expected, `${JSON.stringify(doc.slice(0, 60))} in chunks of ${size}`);
      }
    }
  });

  test('top-level shapes', async () => {
    assert.deepEqual((await json('[{"id": "a"}]')).problems, [
      '(top level): expected an object with "students", "devices", "marks" or "push" members, found an array',
    ]);
    assert.deepEqual((await json('null')).problems, [
      '(top level): expected an object with "students", "devices", "marks" or "push" members, found null',
    ]);
    assert.deepEqual((await json('{}')).problems, []);
    assert.deepEqual((await json('{"students": null, "devices": {"id": "x"}}')).problems, [
      'students: expected an array, found null',
      'devices: expected an array, found an object',
    ]);
    const twice = await json('{"devices": [{"id": "a"}],\n "devices": [{"id": "b"}]}');
    assert.deepEqual(twice.problems, ['line 2 column 2: member "devices" appears twice in one object']);
    assert.equal(twice.rows.length, 1, 'the second array is only checked');
  });

  test('a record longer than the limit is refused, not buffered', async () => {
    // Refused once the limit is passed without the record's end in sight (memory: the limit and a chunk).
    const doc = `{"devices": [{"id": "a", "token": "${'x'.repeat(2 * MAX_VALUE_CHARS)}"}]}`;
    const { problems, rows } = await json(doc, 65536);
    assert.deepEqual(problems, [
      `line 1 column 14: a value longer than ${MAX_VALUE_CHARS} characters; records are far smaller`,
    ]);
    assert.equal(rows.length, 0);
  });

  test('columns count code points on long lines cut into many chunks', async () => {
    const doc = `{"devices": [${'{"id": "\u{1F600}"}, '.repeat(5000)}{"id": x}]}`;
    const expected = (() => {
      try {
        parseDataset(doc);
      } catch (error) {
        return (error as DatasetError).problems[0];
      }
      return '';
    })();
    assert.match(expected!, /^line 1 column 65021: /);
    assert.deepEqual((await json(doc, 997)).problems, [expected]);
  });
});

describe('streamed CSV table', () => {
  test('quoting, null marker, empty fields, CRLF, embedded line breaks, any column order', async () => {
    const text = 'token,id\r\n"a,b",1\r\n"say ""hi""",2\n\\N,3\n"\\N",4\n,5\n"",6\n"multi\nline\r\ntext",7\n\nx,8';
    const whole = await csv(text);
    assert.deepEqual(whole.problems, []);
    assert.deepEqual(
      whole.rows.map((r) => (r.kind === 'row' ? [r.line, r.ord, r.record] : null)),
      [
        [2, 0, { id: '1', token: 'a,b' }],
        [3, 1, { id: '2', token: 'say "hi"' }],
        [4, 2, { id: '3', token: null }],
        [5, 3, { id: '4', token: '\\N' }],
        [6, 4, { id: '5', token: '' }],
        [7, 5, { id: '6', token: '' }],
        [8, 6, { id: '7', token: 'multi\nline\r\ntext' }],
        [12, 7, { id: '8', token: 'x' }],
      ],
    );
    for (const size of SIZES) assert.deepEqual(await csv(text, 'devices', size), whole, `chunks of ${size}`);
  });

  test('a missing column is null; --null "" reads unquoted empty fields as null', async () => {
    const { rows } = await csv('id_student,school_base_url\n1,http://a\n', 'students');
    assert.deepEqual(rows[0]!.kind === 'row' ? rows[0]!.record : null, {
      id_student: '1',
      fullName: null,
      id_device: null,
      ShowActive: null,
      school_base_url: 'http://a',
    });
    const empty = await csv('id,token\na,\nb,""\nc,\\N\n', 'devices', 4, '');
    assert.deepEqual(
      empty.rows.map((r) => (r.kind === 'row' && r.table === 'devices' ? r.record.token : undefined)),
      [null, '', '\\N'],
    );
    assert.throws(() => checkNullMarker('a,b'), /must not contain a comma/);
  });

  test('problems name their line; the rows after a bad row are still checked', async () => {
    const text = 'id,token\na,1\nb\nc,1,2\nd,"x\u0001"\n\\N,y\ne,ok\n';
    const { problems, rows } = await csv(text);
    assert.deepEqual(problems, [
      'line 3: expected 2 fields as in the header, found 1',
      'line 4: expected 2 fields as in the header, found 3',
      'line 5: token: contains U+0001, a character XML 1.0 does not allow',
      'line 6: id: expected a string (the key), found null',
    ]);
    assert.deepEqual(
      rows.map((r) => (r.kind === 'row' ? r.line : 0)),
      [2, 5, 7],
    );
  });

  test('headers: unknown, repeated and missing key columns', async () => {
    assert.deepEqual((await csv('id,tokn,id\n', 'devices')).problems, [
      'line 1: unknown column "tokn"; the devices columns are id, token',
      'line 1: column "id" appears twice',
    ]);
    assert.deepEqual((await csv('token\nx\n', 'devices')).problems, [
      'line 1: the header has no "id" column (the key)',
    ]);
    assert.deepEqual((await csv('', 'devices')).problems, [
      'line 1: the file is empty; expected a header row naming the columns',
    ]);
    assert.deepEqual((await csv('\ufeffid,token\na,b\n', 'devices')).rows.length, 1);
  });

  test('syntax errors stop the reading with their line', async () => {
    for (const [text, problem] of [
      [
        'id,token\na,b"c\n',
        'line 2: a double quote inside an unquoted field; quote the whole field and double the quote ("")',
      ],
      ['id,token\na,"b"c\n', 'line 2: a closing quote must be followed by a comma or the end of the line'],
      ['id,token\na,b\nc,"never\nclosed\n', 'line 3: a quoted field is not closed before the end of the file'],
      ['id,token\na,b\rc,d\n', 'line 2: a carriage return outside quotes must be followed by a line feed'],
    ] as const) {
      for (const size of [1, 4, 1000]) {
        const { problems } = await csv(text, 'devices', size);
        assert.deepEqual(problems, [problem], `${JSON.stringify(text)} in chunks of ${size}`);
      }
    }
  });

  test('whatever csvLine writes, the parser reads back (property)', () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom('', '\\N', ',', '"', '\r\n', ' a '),
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(value, { minLength: 2, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        fc.constantFrom('\\N', '', 'NULL'),
        (records, marker) => {
          const parser = new CsvParser(marker);
          const text = records.map((r) => csvLine(r, marker)).join('');
          for (let i = 0; i < text.length; i += 3) parser.push(text.slice(i, i + 3));
          parser.end();
          assert.equal(parser.error, null);
          assert.deepEqual(
            parser.records.map((r) => r.fields),
            records,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('UTF-8 decoding', () => {
  async function decode(parts: readonly number[][]): Promise<string> {
    let text = '';
    for await (const piece of decodeUtf8(
      (async function* () {
        for (const p of parts) yield Uint8Array.from(p);
      })(),
    ))
      text += piece;
    return text;
  }

  test('characters cut between chunks are joined; a BOM is dropped', async () => {
    const bytes = [...Buffer.from('\ufeffé\u{1F600}x', 'utf8')];
    assert.equal(await decode(bytes.map((b) => [b])), 'é\u{1F600}x');
  });

  test('invalid bytes are refused with about where they are', async () => {
    await assert.rejects(
      decode([
        [0x61, 0x62],
        [0x63, 0xff, 0x64],
      ]),
      (error: unknown) => error instanceof InvalidUtf8Error && error.byteOffset === 3,
    );
    await assert.rejects(
      decode([[0x61, 0xe2, 0x82]]),
      (error: unknown) => error instanceof InvalidUtf8Error && /not valid UTF-8/.test(error.message),
    );
  });
});
