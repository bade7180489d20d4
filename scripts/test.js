#!/usr/bin/env node
// `npm test` (after `pretest` built): every compiled test file under dist/test/ run by Node's test
// runner, each in its own process, two files at a time (on a 2-core machine: the CPU is the limit,
// and two keep both cores busy while one file waits on a child process or the network). One spec
// report of every test, closed by ONE summary of them all; the exit code is 1 on any failure.
//
//   node scripts/test.js [--concurrency=N] [--list] [PATH...]
//
// PATH selects files whose path under dist/test/ starts with it (`store/`, `wire/golden`); --list
// prints the files in the order they would start, with the reason a file is held back, and runs
// nothing. A compiled test whose source is gone (test/…/x.test.ts deleted) is not run, so the build
// before may be incremental.
//
// Time-outs (a service that dies fails its test, never hangs the suite): each test has
// TEST_TIMEOUT_MS unless it sets its own (podman builds, the runtimes test do) — on Node 24 and
// later, whose runner applies the time-out to each test; Node 22's applies it to the whole file, so
// there it is the file's bound instead. Every file is also ended at its FILE_TIMEOUT_MS.
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'test');

/** A test's time-out unless it names its own: far above the slowest test on a loaded 2-core machine. */
const TEST_TIMEOUT_MS = 5 * 60_000;
/** A file's time-out: far above the slowest of the others (48 s in a full run on a loaded 2-core machine). */
const FILE_TIMEOUT_MS = 20 * 60_000;
/** Files that need longer (each test in them names its own time-out). */
const LONG_FILES = new Map([
  ['deploy/container-image.test.js', 60 * 60_000], // builds the image (30 min allowed for the build alone)
  ['deploy/systemd-container.test.js', 60 * 60_000], // builds the systemd image
  ['deploy/runtimes.test.js', 60 * 60_000], // installs and builds the repository on three Node.js lines, each with npm 11 and 12
]);

/**
 * Files that share something outside their own process, so that they never run beside each other
 * (each may run beside any other file): the podman files build and run images and containers under
 * fixed names in one podman storage. Every other file makes its own ports, PostgreSQL schemas, Redis
 * keys (named by its own databases), temporary folders, private PostgreSQL cluster or Redis server,
 * so none has to run alone: run two at a time, no test failed for running beside another (the
 * one that failed under the load, the PostgreSQL faults test's fixed wait, now waits for the event).
 */
const LANES = new Map([
  ['deploy/container-image.test.js', 'podman'],
  ['deploy/systemd-container.test.js', 'podman'],
]);

/**
 * The slowest files start first (measured: `node scripts/test.js` prints each file's time), so no
 * long file is left to run by itself at the end while a core idles.
 */
const FIRST = ['deploy/runtimes.test.js', 'deploy/container-image.test.js', 'deploy/systemd-container.test.js'];

const args = process.argv.slice(2);
const list = args.includes('--list');
const concurrencyArg = args.find((a) => a.startsWith('--concurrency='));
const concurrency = concurrencyArg === undefined ? 2 : Number(concurrencyArg.slice('--concurrency='.length));
const selectors = args
  .filter((a) => !a.startsWith('--'))
  .map((a) => a.replace(/^(\.\/)?(dist\/)?test\//, '').replace(/\.ts$/, '.js'));
const unknown = args.filter((a) => a.startsWith('--') && a !== '--list' && a !== concurrencyArg);
if (unknown.length > 0 || !(Number.isInteger(concurrency) && concurrency >= 1)) {
  process.stderr.write(
    `test: unknown option ${unknown[0] ?? concurrencyArg}: use [--concurrency=N (N ≥ 1)] [--list] [PATH...]\n`,
  );
  process.exit(2);
}
if (!existsSync(compiled)) {
  process.stderr.write('test: dist/test/ is missing: run `npm test` (it builds first) or `npm run build`\n');
  process.exit(2);
}

/** Compiled test files (POSIX paths under dist/test/) whose TypeScript source still exists. */
function testFiles() {
  return readdirSync(compiled, { recursive: true })
    .map((f) => String(f).split(sep).join('/'))
    .filter((f) => f.endsWith('.test.js') && existsSync(join(root, 'test', f.replace(/\.js$/, '.ts'))))
    .filter((f) => selectors.length === 0 || selectors.some((s) => f.startsWith(s)))
    .sort();
}

const rank = (f) => (FIRST.includes(f) ? FIRST.indexOf(f) : FIRST.length);
const files = testFiles().sort((a, b) => rank(a) - rank(b));
if (files.length === 0) {
  process.stderr.write(`test: no test file under dist/test/ matches ${selectors.join(' ')}\n`);
  process.exit(2);
}
if (list) {
  for (const f of files) {
    process.stdout.write(`dist/test/${f}${LANES.has(f) ? `\tnever beside another ${LANES.get(f)} file` : ''}\n`);
  }
  process.exit(0);
}

const perTestTimeout = Number(process.versions.node.split('.')[0]) >= 24;
/** Node's own summary lines, summed over the files instead of printed per file. */
const SUMMARY = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/;
const totals = { tests: 0, suites: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
const report = new PassThrough({ objectMode: true });
const reporter = report.compose(spec);
reporter.pipe(process.stdout);
reporter.on('error', (error) => {
  process.stderr.write(`test: the report failed, so the suite's outcome is unknown: ${error.stack}\n`);
  process.exit(1);
});
const started = Date.now();

/**
 * Runs one file through Node's runner; its events go into the one report when it ends, all
 * together (the spec reporter follows each file's nesting, which two files' events interleaved
 * would break).
 */
async function runFile(file) {
  const fileTimeout = LONG_FILES.get(file) ?? FILE_TIMEOUT_MS;
  const fileStarted = Date.now();
  const events = run({
    files: [join(compiled, file)],
    timeout: perTestTimeout ? TEST_TIMEOUT_MS : fileTimeout,
    // A file that does not end (a timer or a child's pipe left open) is ended here, its tests
    // cancelled and counted as failed. Not forceExit: a child that exits at once when its tests
    // end may not have flushed its report to the pipe, and the lost events (measured: 19 to 30 of
    // unit/dataset.test.js's 60 tests reported) would hide failures.
    signal: AbortSignal.timeout(fileTimeout),
  });
  const kept = [];
  for await (const event of events) {
    if (event.type === 'test:summary') continue;
    const line = event.type === 'test:diagnostic' && event.data.nesting === 0 && SUMMARY.exec(event.data.message);
    if (!line) kept.push(event);
    else if (line[1] in totals) totals[line[1]] += Number(line[2]);
  }
  const seconds = ((Date.now() - fileStarted) / 1000).toFixed(1);
  kept.push({ type: 'test:diagnostic', data: { nesting: 0, message: `dist/test/${file}: ${seconds} s` } });
  for (const event of kept) report.write(event);
}

/** Starts files while slots are free, in order, skipping a file whose lane is busy for now. */
await new Promise((resolve, reject) => {
  const waiting = [...files];
  const running = new Set();
  const next = () => {
    if (waiting.length === 0 && running.size === 0) return resolve();
    for (let i = 0; i < waiting.length && running.size < concurrency;) {
      const file = waiting[i];
      if (LANES.has(file) && [...running].some((r) => LANES.get(r) === LANES.get(file))) {
        i++;
        continue;
      }
      waiting.splice(i, 1);
      running.add(file);
      runFile(file).then(() => {
        running.delete(file);
        next();
      }, reject);
    }
  };
  next();
});
const reportEnded = once(reporter, 'end');
report.end();
await reportEnded;

const failed = totals.fail + totals.cancelled;
const summary = [
  ...Object.entries(totals).map(([k, v]) => `ℹ ${k} ${v}`),
  `ℹ duration_ms ${Date.now() - started}`,
  `${totals.pass} passed, ${failed} failed, ${totals.skipped + totals.todo} skipped`,
];
process.stdout.write(`\n${summary.join('\n')}\n`);
process.exitCode = failed > 0 || totals.tests === 0 ? 1 : 0;
