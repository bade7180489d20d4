/**
 * node:sqlite against better-sqlite3 on what the store does, in one process on one database file
 * (the benchmark's data, imported by the store): the point lookup of GetTokenDevice, the
 * 1,000-student list of GetStudentSchool (row objects and arrays), AuthCode's transaction (BEGIN
 * IMMEDIATE, the code and its message inserted, COMMIT), and node:sqlite through the store's own
 * connection (src/store/sqlite/sqlite-driver.ts). better-sqlite3 is no dependency: give the folder
 * of an install of it (npm 12 installs version 13's prebuilt binary without running its script:
 * `npx -y npm@12 install better-sqlite3@13 --ignore-scripts` in an empty folder).
 *
 * The drivers take turns, round after round, so a loaded machine slows both alike; each figure is
 * the median over the rounds of the CPU time (process.cpuUsage, user + system) per operation.
 *
 * Usage: node dist/bench/sqlite-drivers.js BETTER_SQLITE3_DIR   (BENCH_DRIVER_ROUNDS=15)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg as systemLoad, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openStore } from '../src/store/open/open-store.js';
import { SqliteConnection } from '../src/store/sqlite/sqlite-driver.js';
import { median } from './report/stats.js';
import { BIG_SCHOOL, mainDataset } from './scenarios/datasets.js';

/** The part of better-sqlite3's API used here. */
interface BetterStatement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
  raw(on: boolean): BetterStatement;
}
interface BetterDatabase {
  prepare(sql: string): BetterStatement;
  pragma(sql: string): unknown;
  transaction(fn: () => void): { immediate(): void };
  close(): void;
}
type BetterConstructor = new (file: string, options: { timeout: number }) => BetterDatabase;

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: node dist/bench/sqlite-drivers.js BETTER_SQLITE3_DIR');
const Better = createRequire(import.meta.url)(dir) as BetterConstructor;
const betterVersion = (createRequire(import.meta.url)(join(dir, 'package.json')) as { version: string }).version;
const ROUNDS = Number(process.env['BENCH_DRIVER_ROUNDS'] ?? 15);

const TOKEN = 'select "token" from "devices" where "id" = ?';
const STUDENTS =
  'select "id_student", "fullName", "id_device", "ShowActive", "school_base_url" from "students" where "school_base_url" = ? and "ShowActive" = ? order by "seq"';
const INSERT_CODE = 'insert into auth_codes (code, phone, created_at) values (?, ?, ?)';
const INSERT_MESSAGE =
  "insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at) values (?, ?, ?, 'pending', 0, ?, ?)";

interface Case {
  readonly name: string;
  /** Operations a round. */
  readonly n: number;
  readonly fns: Readonly<Record<string, (i: number) => unknown>>;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'sis-drivers-'));
  const file = join(work, 'drivers.sqlite');
  const store = await openStore(`sqlite:${file}`);
  await store.importDataset(mainDataset());
  await store.close();

  const better = new Better(file, { timeout: 5000 });
  better.pragma('journal_mode = WAL');
  better.pragma('synchronous = NORMAL');
  const node = new DatabaseSync(file, { timeout: 5000 });
  node.exec('pragma journal_mode = WAL; pragma synchronous = NORMAL');
  const ours = new SqliteConnection(file, { timeoutMs: 5000 });
  ours.exec('pragma synchronous = NORMAL');

  const bToken = better.prepare(TOKEN);
  const bTokenRaw = better.prepare(TOKEN).raw(true);
  const bStudents = better.prepare(STUDENTS);
  const bStudentsRaw = better.prepare(STUDENTS).raw(true);
  const nToken = node.prepare(TOKEN);
  const nTokenArrays = node.prepare(TOKEN);
  nTokenArrays.setReturnArrays(true);
  const nStudents = node.prepare(STUDENTS);
  const nStudentsArrays = node.prepare(STUDENTS);
  nStudentsArrays.setReturnArrays(true);
  const bCode = better.prepare(INSERT_CODE);
  const bMessage = better.prepare(INSERT_MESSAGE);
  const bAuthCode = better.transaction(() => {
    const at = new Date().toISOString();
    bCode.run('123456', '+15551234567', at);
    bMessage.run('+15551234567', '123456', 'Your code is 123456', at, at);
  });
  const nBegin = node.prepare('begin immediate');
  const nCommit = node.prepare('commit');
  const nCode = node.prepare(INSERT_CODE);
  const nMessage = node.prepare(INSERT_MESSAGE);
  const oursCode = ours.prepare(INSERT_CODE);
  const oursMessage = ours.prepare(INSERT_MESSAGE);

  const id = (i: number): string => String((i % 5) + 1);
  const cases: Case[] = [
    {
      name: 'point lookup (GetTokenDevice), row object',
      n: 20_000,
      fns: {
        [`better-sqlite3 ${betterVersion}`]: (i) => bToken.get(id(i)),
        'node:sqlite': (i) => nToken.get(id(i)),
        'node:sqlite, store connection': (i) => ours.prepare(TOKEN).get([id(i)]),
      },
    },
    {
      name: 'point lookup (GetTokenDevice), row array',
      n: 20_000,
      fns: {
        [`better-sqlite3 ${betterVersion}`]: (i) => bTokenRaw.get(id(i)),
        'node:sqlite': (i) => nTokenArrays.get(id(i)),
        'node:sqlite, store connection': (i) => ours.prepare(TOKEN).get([id(i)], true),
      },
    },
    {
      name: '1,000-student list, row objects',
      n: 40,
      fns: {
        [`better-sqlite3 ${betterVersion}`]: () => bStudents.all(BIG_SCHOOL, '1'),
        'node:sqlite': () => nStudents.all(BIG_SCHOOL, '1'),
        'node:sqlite, store connection': () => ours.prepare(STUDENTS).all([BIG_SCHOOL, '1']),
      },
    },
    {
      name: '1,000-student list, row arrays',
      n: 40,
      fns: {
        [`better-sqlite3 ${betterVersion}`]: () => bStudentsRaw.all(BIG_SCHOOL, '1'),
        'node:sqlite': () => nStudentsArrays.all(BIG_SCHOOL, '1'),
        'node:sqlite, store connection': () => ours.prepare(STUDENTS).all([BIG_SCHOOL, '1'], true),
      },
    },
    {
      name: "AuthCode's transaction (2 inserts, WAL, synchronous NORMAL)",
      n: 300,
      fns: {
        [`better-sqlite3 ${betterVersion}`]: () => bAuthCode.immediate(),
        'node:sqlite': () => {
          const at = new Date().toISOString();
          nBegin.run();
          nCode.run('123456', '+15551234567', at);
          nMessage.run('+15551234567', '123456', 'Your code is 123456', at, at);
          nCommit.run();
        },
        'node:sqlite, store connection': () =>
          ours.immediate(() => {
            const at = new Date().toISOString();
            oursCode.run(['123456', '+15551234567', at]);
            oursMessage.run(['+15551234567', '123456', 'Your code is 123456', at, at]);
          }),
      },
    },
  ];

  process.stdout.write(
    `node:sqlite (SQLite ${process.versions.sqlite}) against better-sqlite3 ${betterVersion}, Node ${process.version}, ` +
      `load ${loadavg()}; CPU µs an operation, median of ${ROUNDS} rounds\n\n| case | driver | µs |\n| --- | --- | ---: |\n`,
  );
  for (const c of cases) {
    const samples = new Map<string, number[]>(Object.keys(c.fns).map((k) => [k, []]));
    // One round not counted: statements compiled, pages cached.
    for (let round = -1; round < ROUNDS; round++) {
      for (const [name, fn] of Object.entries(c.fns)) {
        const start = process.cpuUsage();
        for (let i = 0; i < c.n; i++) fn(i);
        const used = process.cpuUsage(start);
        if (round >= 0) samples.get(name)!.push((used.user + used.system) / c.n);
      }
    }
    for (const [name, s] of samples) process.stdout.write(`| ${c.name} | ${name} | ${median(s).toFixed(2)} |\n`);
  }
  process.stdout.write(`\nload at the end ${loadavg()}\n`);
  better.close();
  node.close();
  ours.close();
  rmSync(work, { recursive: true, force: true });
}

function loadavg(): string {
  return systemLoad()
    .map((l) => l.toFixed(1))
    .join(' ');
}

await main();
