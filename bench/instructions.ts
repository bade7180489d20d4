/**
 * What a request costs a server, counted rather than timed: instructions per request under
 * callgrind (valgrind --tool=callgrind), and CPU µs per request from /proc without valgrind. Each
 * target is started alone for one scenario on core 0 (the client on core 1), warmed up, then sent
 * a fixed number of requests over a few keep-alive connections; under callgrind the counters are
 * zeroed after the warm-up and dumped after the requests (callgrind_control), so start-up and
 * warm-up are left out; the main thread's count is the one to compare (see `instructions`). Instruction counts hardly move with the machine's other work; CPU time does.
 *
 * Usage: node dist/bench/instructions.js [SCENARIO [TARGET...]]
 *   (default token-soap11 ours necessary; TARGET as for profile.js)
 * Environment: BENCH_REQUESTS (4000), BENCH_WARMUP_REQUESTS (10000: V8 compiles ours for longer than a
 *   thousand requests, and counts taken earlier are mostly the compiler's), BENCH_CONNECTIONS (4),
 *   BENCH_CPU_ROUNDS (3: CPU µs is the median of rounds of BENCH_REQUESTS × 5 each),
 *   BENCH_CALLGRIND=0 (CPU only), BENCH_FUNCTIONS=N (also the N functions of the main thread that
 *   execute most, JavaScript named through node's --perf-basic-prof), BENCH_NICE as for the run,
 *   BENCH_NODE_FLAGS (ours' node flags instead of `npm start`'s; empty: the runtime's own defaults).
 *   Needs valgrind for the counts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { topFunctions } from './load/callgrind-functions.js';
import { cpuSecondsOf } from './load/proc-stat.js';
import { cores, pinSelf } from './load/processes.js';
import { sendCount } from './load/request-count.js';
import { median } from './report/stats.js';
import { mainDataset } from './scenarios/datasets.js';
import { TARGETS, isOurs, pathFor } from './scenarios/scenario.js';
import type { Scenario, TargetName } from './scenarios/scenario.js';
import { scenarios } from './scenarios/scenarios.js';
import { checkOnce } from './targets/http-check.js';
import { importDataset, shippedNodeFlags } from './targets/servers.js';
import type { Server } from './targets/servers.js';
import { startTarget } from './targets/start-target.js';

const env = process.env;
const count = (name: string, fallback: number): number => {
  const n = Number(env[name] ?? fallback);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}=${env[name]}: expected a positive whole number`);
  return n;
};
const requests = count('BENCH_REQUESTS', 4000);
const warmup = count('BENCH_WARMUP_REQUESTS', 10_000);
const connections = count('BENCH_CONNECTIONS', 4);
const cpuRounds = count('BENCH_CPU_ROUNDS', 3);
const withCallgrind = env['BENCH_CALLGRIND'] !== '0';
const functions = env['BENCH_FUNCTIONS'] === undefined ? 0 : count('BENCH_FUNCTIONS', 30);

const [id = 'token-soap11', ...named] = process.argv.slice(2);
const targets = (named.length > 0 ? named : ['ours', 'necessary']) as TargetName[];
for (const t of targets) if (!TARGETS.includes(t)) throw new Error(`unknown target ${t}; one of ${TARGETS.join(', ')}`);

interface Context {
  readonly scenario: Scenario;
  readonly core: { server: string | null; load: string | null };
  readonly db: string;
  readonly work: string;
}

const send = (s: Scenario, server: Server, target: TargetName, n: number): Promise<void> =>
  sendCount(server.base, pathFor(s, target), s.request, n, connections);

/** Instructions per request, all threads and the main thread alone. */
interface Counted {
  readonly all: number;
  readonly main: number;
  /** With BENCH_FUNCTIONS: the main thread's largest functions, instructions per request. */
  readonly top: readonly [string, number][];
}

/**
 * Instructions per request: callgrind's counters zeroed after the warm-up, dumped after the
 * requests, one count per thread. The main thread's is the request's work; the others are V8's
 * helpers, and under valgrind, which runs one thread at a time, its optimizing compiler's thread
 * finishes work queued during the warm-up inside the counted window (a large share of all
 * instructions in every target, RESULTS.md): counted, but not the request's.
 */
async function instructions(c: Context, target: TargetName): Promise<Counted> {
  const out = join(c.work, `callgrind.${target}.out`);
  const server = await startTarget({
    target,
    scenario: c.scenario,
    core: c.core.server,
    db: c.db,
    work: c.work,
    nodeFlags: [...flagsOf(target), ...(functions > 0 ? ['--perf-basic-prof'] : [])],
    wrapper: ['valgrind', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${out}`],
    upTimeoutMs: 300_000,
  });
  try {
    await checkOnce(c.scenario, target, server.base);
    await send(c.scenario, server, target, warmup);
    control('-z', server.child.pid);
    await send(c.scenario, server, target, requests);
    control('-d', server.child.pid);
  } finally {
    await server.child.stop();
  }
  // The dump after the requests is the first numbered one, a file per thread (out.1-01 is the
  // main thread); the exit writes out-NN itself.
  const dumps = readdirSync(c.work)
    .filter((f) => f.startsWith(`callgrind.${target}.out.1-`))
    .sort();
  if (dumps.length === 0)
    throw new Error(`callgrind wrote no dump for ${target}; files there: ${readdirSync(c.work).join(' ')}`);
  const summaryOf = (file: string): number => {
    const summary = /^summary: (\d+)/m.exec(readFileSync(join(c.work, file), 'utf8'));
    if (summary === null) throw new Error(`no summary line in ${file}`);
    return Number(summary[1]);
  };
  const counts = dumps.map(summaryOf);
  const mapFile = `/tmp/perf-${server.child.pid}.map`;
  const top = functions > 0 ? topFunctions(join(c.work, dumps[0]!), mapFile, requests, functions) : [];
  if (functions > 0) rmSync(mapFile, { force: true });
  return { all: counts.reduce((a, b) => a + b, 0) / requests, main: counts[0]! / requests, top };
}

/**
 * valgrind names its control pipes after the HOST and USER of the process's environment (ours
 * gets HOST=127.0.0.1): callgrind_control must see the same values to find them.
 */
function control(option: '-z' | '-d', pid: number): void {
  const theirs = new Map(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
  );
  const controlEnv: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'HOST' && k !== 'USER'),
  );
  for (const name of ['HOST', 'USER']) {
    const value = theirs.get(name);
    if (value !== undefined) controlEnv[name] = value;
  }
  const r = spawnSync('callgrind_control', [option, String(pid)], { encoding: 'utf8', env: controlEnv });
  if (r.status !== 0 || !/OK/.test(r.stdout))
    throw new Error(`callgrind_control ${option} ${pid} failed: ${r.stderr}${r.stdout}`);
}

/** Ours runs with `npm start`'s node flags, or BENCH_NODE_FLAGS (space-separated; empty: the runtime's own defaults). */
function flagsOf(target: TargetName): string[] {
  if (!isOurs(target)) return [];
  const given = process.env['BENCH_NODE_FLAGS'];
  return given === undefined ? shippedNodeFlags() : given.split(' ').filter((f) => f !== '');
}

/** CPU µs per request: the server's user + system time over the requests, median of the rounds. */
async function cpuPerRequest(c: Context, target: TargetName): Promise<{ median: number; all: number[] }> {
  const { scenario: s } = c;
  const server = await startTarget({
    target,
    scenario: s,
    core: c.core.server,
    db: c.db,
    work: c.work,
    nodeFlags: flagsOf(target),
  });
  const n = requests * 5;
  const all: number[] = [];
  try {
    await checkOnce(s, target, server.base);
    await send(s, server, target, warmup);
    for (let i = 0; i < cpuRounds; i++) {
      const before = cpuSecondsOf(server.child.pid);
      await send(s, server, target, n);
      all.push(((cpuSecondsOf(server.child.pid) - before) / n) * 1e6);
    }
    await checkOnce(s, target, server.base);
  } finally {
    await server.child.stop();
  }
  return { median: median(all), all };
}

async function main(): Promise<void> {
  const core = cores(cpus().length);
  pinSelf(core.load);
  const work = mkdtempSync(join(tmpdir(), 'sis-instructions-'));
  const data = mainDataset();
  const scenario = scenarios(data).find((x) => x.id === id);
  if (scenario === undefined)
    throw new Error(
      `unknown scenario ${id}; one of: ${scenarios(data)
        .map((x) => x.id)
        .join(', ')}`,
    );
  writeFileSync(join(work, 'main.json'), JSON.stringify(data));
  const db = join(work, 'main.sqlite');
  await importDataset(join(work, 'main.json'), db);
  const c: Context = { scenario, core, db, work };
  const load0 = loadavg();
  process.stdout.write(
    `${scenario.id} (${scenario.title}, ${scenario.binding}): ${warmup} warm-up requests, then ${requests} counted (CPU: ${cpuRounds} rounds of ${requests * 5}), ${connections} keep-alive connections\n\n`,
  );
  process.stdout.write(
    '| target | instructions/request, main thread | all threads | CPU µs/request (median) | CPU µs, each round |\n|---|---:|---:|---:|---|\n',
  );
  try {
    const tops: [TargetName, readonly [string, number][]][] = [];
    for (const t of targets) {
      const ir = withCallgrind ? await instructions(c, t) : null;
      if (ir !== null && ir.top.length > 0) tops.push([t, ir.top]);
      const n = (v: number | undefined): string => (v === undefined ? 'n/a' : Math.round(v).toLocaleString('en-US'));
      const cpu = await cpuPerRequest(c, t);
      process.stdout.write(
        `| ${t} | ${n(ir?.main)} | ${n(ir?.all)} | ${cpu.median.toFixed(1)} | ${cpu.all.map((v) => v.toFixed(1)).join(', ')} |\n`,
      );
    }
    for (const [t, top] of tops) {
      process.stdout.write(`\n${t}: the main thread's ${top.length} largest functions, own instructions a request\n\n`);
      for (const [name, perRequest] of top)
        process.stdout.write(`${Math.round(perRequest).toString().padStart(8)}  ${name}\n`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const load1 = loadavg();
  process.stdout.write(
    `\nLoad average (1 min) ${load0[0]!.toFixed(2)} at start, ${load1[0]!.toFixed(2)} at end; ${cpus().length} cores.\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`instructions: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
