#!/usr/bin/env node
// How `sis import` and `sis export`'s own readers and writer compare with well-kept streaming
// libraries on the 1M-row files (docs/data-at-scale.md, "Parsers: ours or a library"). Each case
// runs in a child process of its own and reads the whole file: wall clock and CPU (user + system).
//
//   npm run build && node scripts/generate-dataset.js --out /tmp/sis-measure/data
//   npm install --no-save @streamparser/json stream-json csv-parse csv-stringify
//   node scripts/measure-parsers.js [DIR] [ROUNDS]
//
// DIR defaults to /tmp/sis-measure/data; ROUNDS (default 2) alternates the cases, so that other
// load on the machine hits them alike; CASES=json runs only the cases whose name has that text. A library that is not installed is skipped with a message.
//
// What each library case does is the least an adapter would: the same rows out, with the line each
// starts on (the places problems are reported with) and what the library must give for the rest
// (JSON: a member named twice in a record; CSV: whether a field was quoted, for the null marker).
import { spawnSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { join } from 'node:path';
import { URL } from 'node:url';
import { TextDecoder } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const CASES = {
  'json: ours (dist/src/dataset/json-stream.js)': ['json', oursJson],
  'json: @streamparser/json Tokenizer + records, member names, lines': ['json', streamparserJson],
  'json: stream-json parser (tokens only; no places it can give)': ['json', streamJson],
  'csv students: ours (dist/src/dataset/csv.js)': ['students', oursCsv],
  'csv students: csv-parse, lines (info)': ['students', (f) => csvParse(f, false)],
  'csv students: csv-parse, lines and quoting (info, cast)': ['students', (f) => csvParse(f, true)],
  'csv write 1M students: ours (csvLine)': ['none', oursCsvWrite],
  'csv write 1M students: csv-stringify': ['none', csvStringifyWrite],
};
const FILES = { json: 'dataset.json', students: 'students.csv' };

const [first, second] = process.argv.slice(2);
if (first === '--case') {
  const [kind, run] = CASES[second];
  const prepared = kind === 'none' ? studentRows() : null; // rows to write, made before the clock starts
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  let rows;
  try {
    rows = await run(prepared ?? join(process.env.DIR, FILES[kind]));
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') {
      console.log(
        `${second.padEnd(70)} skipped: ${error.message.match(/'([^']+)'/)?.[1] ?? 'a module'} is not installed`,
      );
      process.exit(0);
    }
    throw error;
  }
  const used = process.cpuUsage(cpu);
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(
    `${second.padEnd(70)} ${String(rows).padStart(8)} rows  wall ${wall.toFixed(2)} s  cpu ${((used.user + used.system) / 1e6).toFixed(2)} s`,
  );
} else {
  const dir = first ?? '/tmp/sis-measure/data';
  const rounds = Number(second ?? 2);
  const load = () => spawnSync('cat', ['/proc/loadavg']).stdout.toString().trim();
  console.log(`files in ${dir}; load average before: ${load()}`);
  for (let round = 1; round <= rounds; round++) {
    console.log(`--- round ${round}`);
    for (const name of Object.keys(CASES).filter((n) => n.includes(process.env.CASES ?? ''))) {
      spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--case', name], {
        stdio: 'inherit',
        env: { ...process.env, DIR: dir },
      });
    }
  }
  console.log(`load average after: ${load()}`);
}

function input(file) {
  return createReadStream(file, { highWaterMark: 1 << 16 });
}

async function oursJson(file) {
  const { decodeUtf8 } = await import(join(root, 'dist/src/dataset/utf8.js'));
  const { jsonDatasetSource } = await import(join(root, 'dist/src/dataset/json-stream.js'));
  let rows = 0;
  for await (const batch of jsonDatasetSource(decodeUtf8(input(file))).items)
    for (const item of batch) if (item.kind === 'row') rows++;
  return rows;
}

async function oursCsv(file) {
  const { decodeUtf8 } = await import(join(root, 'dist/src/dataset/utf8.js'));
  const { csvSource } = await import(join(root, 'dist/src/dataset/csv.js'));
  let rows = 0;
  for await (const batch of csvSource(decodeUtf8(input(file)), 'students').items)
    for (const item of batch) if (item.kind === 'row') rows++;
  return rows;
}

/** Tokens into records (depth 2: {"table": [record, ...]}), a member named twice noticed, each record's line, the record checked. */
async function streamparserJson(file) {
  const { Tokenizer } = await import('@streamparser/json');
  const { checkRecord } = await import(join(root, 'dist/src/store/import/record-check.js'));
  const tokenizer = new Tokenizer({ stringBufferSize: 1 << 16 });
  let rows = 0;
  let depth = 0;
  let table = null;
  const stack = [];
  let current = null;
  let key = null;
  let expectKey = false;
  let recordStart = 0;
  // Lines: newlines counted up to the start of each record (offsets only grow).
  let line = 1;
  let counted = 0;
  let chunk = null;
  let chunkStart = 0;
  const lineAt = (offset) => {
    for (
      let i = chunk.indexOf(10, Math.max(0, counted - chunkStart));
      i !== -1 && i < offset - chunkStart;
      i = chunk.indexOf(10, i + 1)
    )
      line++;
    counted = offset;
    return line;
  };
  let recordLine = 0;
  let batch = [];
  const put = (value) => {
    if (Array.isArray(current)) current.push(value);
    else if (Object.hasOwn(current, key)) throw new Error(`member ${key} twice`);
    else current[key] = value;
  };
  const close = () => {
    const done = current;
    const outer = stack.pop();
    if (outer === undefined) {
      current = null;
      const record = checkRecord(table, done, `${table}[${rows}]`, () => undefined);
      // What ours hands to the import: one item per row, in a batch per chunk of the file.
      batch.push({ kind: 'row', table, ord: rows, line: recordLine, record });
      rows++;
    } else {
      [current, key] = outer;
      put(done);
    }
  };
  tokenizer.onToken = ({ token, value, offset }) => {
    switch (token) {
      case 0: // {
      case 2: // [
        if (depth === 2) {
          recordStart = offset;
          recordLine = lineAt(recordStart);
        }
        if (depth >= 2) {
          if (current !== null) stack.push([current, key]);
          current = token === 0 ? {} : [];
          expectKey = token === 0;
        }
        depth++;
        return;
      case 1: // }
      case 3: // ]
        depth--;
        if (depth >= 2) close();
        return;
      case 4: // :
        return;
      case 5: // ,
        if (current !== null && !Array.isArray(current)) expectKey = true;
        return;
      case 9: // a string
        if (depth === 1) {
          table = value === 'students' ? 'students' : 'devices';
          return;
        }
        if (expectKey && current !== null) {
          key = value;
          expectKey = false;
          return;
        }
      // falls through
      default:
        if (current !== null) put(value);
    }
  };
  let items = 0;
  for await (const bytes of input(file)) {
    if (!isUtf8(bytes)) throw new Error('not UTF-8 (a real adapter would carry characters cut between chunks)');
    if (chunk !== null) lineAt(chunkStart + chunk.length); // the newlines left in the previous chunk
    chunkStart += chunk?.length ?? 0;
    chunk = bytes;
    tokenizer.write(bytes);
    items += batch.length;
    batch = [];
  }
  if (!tokenizer.isEnded) tokenizer.end();
  return recordLine === line && items === rows ? rows : 0;
}

/** stream-json's tokenizer, fed line by line (so each record's line is known), records counted. */
async function streamJson(file) {
  const { jsonParser } = await import('stream-json/core/parser.js');
  const parse = jsonParser({ streamValues: false });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let rows = 0;
  let depth = 0;
  const count = (result) => {
    for (const t of result?.values ?? []) {
      if (t.name === 'startObject') {
        if (++depth === 3) rows++;
      } else if (t.name === 'endObject') depth--;
      else if (t.name === 'startArray') depth++;
      else if (t.name === 'endArray') depth--;
    }
  };
  for await (const bytes of input(file)) count(parse(decoder.decode(bytes, { stream: true })));
  count(parse(Symbol.for('object-stream.none')));
  return rows;
}

async function csvParse(file, quoting) {
  const { Parser } = await import('csv-parse');
  const options = {
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    record_delimiter: ['\r\n', '\n'],
    info: true,
  };
  if (quoting) options.cast = (value, context) => (!context.quoting && value === '\\N' ? null : value);
  const parser = new Parser(options);
  let rows = -1; // the header
  const drain = () => {
    while (parser.read() !== null) rows++;
  };
  for await (const bytes of input(file)) {
    parser.write(bytes);
    drain();
  }
  parser.end();
  drain();
  return rows;
}

function studentRows() {
  const rows = [];
  for (let i = 0; i < 1_000_000; i++) {
    rows.push([
      `s${i}`,
      i % 1000 === 0 ? `O'Brien, "Zoë" ${i}` : `Student ${i}`,
      i % 50 === 0 ? null : `d${i}`,
      '1',
      `http://school-${i % 100}.example`,
    ]);
  }
  return rows;
}

async function oursCsvWrite(rows) {
  const { csvLine } = await import(join(root, 'dist/src/dataset/csv.js'));
  let bytes = 0;
  for (let page = 0; page < rows.length; page += 5000) {
    let out = '';
    for (let i = page; i < page + 5000; i++) out += csvLine(rows[i]);
    bytes += out.length;
  }
  return bytes > 0 ? rows.length : 0;
}

/** Null as an unquoted \N, a value equal to \N quoted: a per-field option the cast returns. */
async function csvStringifyWrite(rows) {
  const { Stringifier } = await import('csv-stringify');
  const stringifier = new Stringifier({
    quoted_match: /^\\N$/,
    cast: { null: () => ({ value: '\\N', quoted_match: null }) },
  });
  let bytes = 0;
  for (let page = 0; page < rows.length; page += 5000) {
    for (let i = page; i < page + 5000; i++) stringifier.write(rows[i]);
    for (let piece = stringifier.read(); piece !== null; piece = stringifier.read()) bytes += piece.length;
  }
  return bytes > 0 ? rows.length : 0;
}
