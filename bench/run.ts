/**
 * `npm run bench`: our service against a bare node:http ceiling and node-soap, in one run.
 *
 * Every scenario first checks each target's answer (ours and the ceiling byte for byte,
 * node-soap by its values), then loads the targets in turn, rotating the order from round to
 * round so slow drift of the machine falls on all of them alike. Servers sit on core 0, the
 * load generator (wrk when on PATH, else autocannon, in a child process) on core 1, when taskset
 * exists.
 *
 * Environment: BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_ROUNDS (2), BENCH_WARMUP (1),
 * BENCH_QUICK=1 (1-second smoke run), BENCH_ONLY=regex (scenario ids), BENCH_GROWTH=0 (skip the
 * growth check), BENCH_EXPECT_BODY=1 (the load generator compares every answer of ours and the
 * ceiling), BENCH_LOAD=wrk|autocannon (force one), BENCH_NICE=-10 (run servers and load
 * generator at that priority on a shared machine), BENCH_OUT=file (default bench/RESULTS.md; a
 * quick run writes to its temp dir), BENCH_SILENT=0 (skip the comparison run of ours with
 * LOG_LEVEL=silent), BENCH_DATABASE_URL=postgres://… (every server on that database instead of a
 * SQLite file; its data is replaced).
 *
 * Ours runs with the defaults of `npm start` (logging at info to stdout, a file here): the
 * figures are what users get. Settings in the environment (SIS_LOG_SUCCESS_SAMPLE, …) reach it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { checkOnce, send, verify } from './http-check.js';
import { chooseGenerator, describeGenerator } from './load-generator.js';
import type { LoadGenerator, LoadResult, LoadSpec } from './load-spec.js';
import {
  BENCH_DIST,
  HAS_TASKSET,
  PeakSampler,
  REPO_ROOT,
  cores,
  machineBusySeconds,
  memoryOf,
  nodeCommand,
  pinSelf,
  priorityNote,
  runChild,
} from './processes.js';
import { evaluateTargets, growthTable, resultsTable, summarize, targetsTable, writeResults } from './report.js';
import type { GrowthRecord, RunRecord, Summary } from './report.js';
import { GROWTH_SIZES, growthDataset, mainDataset } from './datasets.js';
import { pathFor, targetsOf } from './scenario.js';
import type { Scenario, TargetName } from './scenario.js';
import { growthScenario, scenarios as allScenarios } from './scenarios.js';
import { fetchWsdl, importDataset, startCeiling, startOurs, startPeer } from './servers.js';
import type { Server } from './servers.js';
import { median } from './stats.js';

interface Options {
  readonly quick: boolean;
  readonly seconds: number;
  readonly connections: number;
  readonly rounds: number;
  readonly warmup: number;
  readonly only: RegExp | null;
  readonly growth: boolean;
  readonly expectBody: boolean;
  /** Also run ours with LOG_LEVEL=silent beside the defaults (BENCH_SILENT=0: not). */
  readonly silent: boolean;
  readonly generator: LoadGenerator;
  readonly out: string | null;
}

function options(env: NodeJS.ProcessEnv): Options {
  const quick = env['BENCH_QUICK'] === '1';
  const generator = chooseGenerator(env);
  // wrk runs for whole seconds only: round up here so every figure printed is the one used.
  const whole = (n: number): number => (generator === 'wrk' ? Math.max(1, Math.ceil(n)) : n);
  const num = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${raw}: expected a positive number`);
    return n;
  };
  return {
    quick,
    seconds: whole(num('BENCH_SECONDS', quick ? 1 : 5)),
    connections: Math.round(num('BENCH_CONNECTIONS', 50)),
    rounds: Math.round(num('BENCH_ROUNDS', quick ? 1 : 2)),
    warmup: whole(num('BENCH_WARMUP', quick ? 0.5 : 1)),
    only: env['BENCH_ONLY'] ? new RegExp(env['BENCH_ONLY']) : null,
    growth: env['BENCH_GROWTH'] !== '0',
    expectBody: env['BENCH_EXPECT_BODY'] === '1',
    silent: env['BENCH_SILENT'] !== '0',
    generator,
    out: env['BENCH_OUT'] ?? (quick ? null : join(REPO_ROOT, 'bench', 'RESULTS.md')),
  };
}

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const fmt = (n: number, d = 0): string =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a';

function machineFacts(core: ReturnType<typeof cores>, generator: LoadGenerator): string[] {
  const require = createRequire(import.meta.url);
  const version = (pkg: string): string => (require(`${pkg}/package.json`) as { version: string }).version;
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const c = cpus();
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return [
    `CPU: ${c[0]?.model ?? 'unknown'} × ${c.length} (logical cores), memory ${fmt(totalmem() / 2 ** 30, 1)} GiB, Linux ${release()}`,
    `Node ${process.version}; soap (node-soap) ${version('soap')}`,
    `Load generator: ${describeGenerator(generator)}${process.env['BENCH_LOAD'] ? ` (BENCH_LOAD=${process.env['BENCH_LOAD']})` : ' (the default: wrk when on PATH)'}`,
    core.server === null
      ? `Pinning: none (${HAS_TASKSET ? 'one core' : 'no taskset'}): servers and load generator share the cores`
      : `Pinning: servers on core ${core.server} (taskset -c ${core.server}), load generator on core ${core.load} (taskset -c ${core.load})`,
    `Commit: ${git('rev-parse', '--short', 'HEAD') || 'unknown'}${dirty ? ' with uncommitted changes in tracked files' : ''}`,
    ...(priorityNote() === null ? [] : [`Priority: ${priorityNote()}`]),
  ];
}

async function main(): Promise<void> {
  const opts = options(process.env);
  const core = cores(cpus().length);
  // The orchestrator only samples /proc while a run lasts; it stays off the server's core.
  pinSelf(core.load);
  const startedAt = new Date();
  const t0 = Date.now();
  const load0 = loadavg();
  const work = mkdtempSync(join(tmpdir(), 'sis-bench-'));
  const facts = machineFacts(core, opts.generator);
  facts.forEach((f) => say(f));
  say(
    `Runs of ${opts.seconds} s, ${opts.connections} connections, ${opts.rounds} round(s), ${opts.warmup} s warm-up; work dir ${work}`,
  );

  const data = mainDataset();
  const scenarios = allScenarios(data).filter((s) => opts.only === null || opts.only.test(s.id));
  writeFileSync(join(work, 'main.json'), JSON.stringify(data));
  const mainDb = join(work, 'main.sqlite');
  await importDataset(join(work, 'main.json'), mainDb);

  const servers = new Map<TargetName, Server>();
  const results = new Map<string, Map<TargetName, Summary>>();
  let growth: GrowthRecord[] = [];
  try {
    const ours = await startOurs(core.server, mainDb, join(work, 'ours.log'));
    servers.set('ours', ours);
    if (opts.silent) servers.set('ours-silent', await startOurs(core.server, mainDb, join(work, 'ours-silent.log'), { silent: true }));
    await fetchWsdl(ours, join(work, 'wsdl'));
    servers.set('node-soap', await startPeer(core.server, mainDb, join(work, 'wsdl')));
    servers.set('ceiling', await startCeiling(core.server, scenarios, work));

    // Correctness first: a wrong answer stops the benchmark before anything is timed.
    for (const s of scenarios) for (const t of targetsOf(s, opts.silent)) await checkOnce(s, t, servers.get(t)!.base);
    say(`Answers checked: ${scenarios.length} scenarios, every target`);

    const runs = new Map<string, RunRecord[]>();
    const total = opts.rounds * scenarios.reduce((n, s) => n + targetsOf(s, opts.silent).length, 0);
    let done = 0;
    for (let round = 0; round < opts.rounds; round++) {
      for (const [i, s] of scenarios.entries()) {
        const targets = targetsOf(s, opts.silent);
        const shift = (round + i) % targets.length;
        const order = [...targets.slice(shift), ...targets.slice(0, shift)];
        for (const t of order) {
          const server = servers.get(t)!;
          if (round === 0 && opts.warmup > 0) await loadRun(s, server, opts, opts.warmup, core.load, work);
          const r = await loadRun(s, server, opts, opts.seconds, core.load, work);
          const key = `${s.id}\u0000${t}`;
          runs.set(key, [...(runs.get(key) ?? []), r]);
          done++;
          say(
            `[${done}/${total}] ${s.id.padEnd(18)} ${t.padEnd(9)} ${fmt(r.load.rps).padStart(7)} req/s  p50 ${fmt(r.load.p50, 2)} ms  p99 ${fmt(r.load.p99, 2)} ms  RSS ${fmt(r.peakRss / 2 ** 20, 1)} MiB  server CPU ${fmt(r.serverCpu * 100)}%  load CPU ${fmt(r.load.cpu * 100)}%  other ${fmt(r.otherCpu * 100)}%${badOf(r.load) > 0 ? `  FAILED ${badOf(r.load)}` : ''}`,
          );
        }
      }
    }
    // And after: load must not have changed an answer.
    for (const s of scenarios) for (const t of targetsOf(s, opts.silent)) await checkOnce(s, t, servers.get(t)!.base);

    for (const s of scenarios) {
      const byTarget = new Map<TargetName, Summary>();
      for (const t of targetsOf(s, opts.silent)) byTarget.set(t, summarize(runs.get(`${s.id}\u0000${t}`) ?? []));
      results.set(s.id, byTarget);
    }
  } finally {
    await Promise.all([...servers.values()].map((s) => s.child.stop()));
  }

  if (opts.growth) growth = await growthCheck(opts, core.server, work);

  const load1 = loadavg();
  const seconds = (Date.now() - t0) / 1000;
  const targets = evaluateTargets(scenarios, results, growth);
  const env = ['BENCH_SECONDS', 'BENCH_CONNECTIONS', 'BENCH_ROUNDS', 'BENCH_WARMUP', 'BENCH_QUICK', 'BENCH_ONLY', 'BENCH_GROWTH', 'BENCH_EXPECT_BODY', 'BENCH_LOAD', 'BENCH_NICE', 'BENCH_SILENT', 'BENCH_DATABASE_URL', 'SIS_LOG_SUCCESS_SAMPLE', 'SIS_ANSWER_CACHE_BYTES']
    .filter((k) => process.env[k] !== undefined)
    .map((k) => `${k}=${(process.env[k] ?? '').replace(/\/\/[^@/]*@/, '//***@')}`);
  const report = [
    `## Run of ${startedAt.toISOString()}`,
    '',
    `Command: \`${[...env, 'npm run bench'].join(' ')}\` — ${opts.rounds} round(s) of ${opts.seconds} s per target and scenario, ${opts.connections} connections, ${opts.warmup} s warm-up per target and scenario before its first round; ${fmt(seconds)} s in all.`,
    '',
    ...facts.map((f) => `- ${f}`),
    `- Load average (1/5/15 min) at start ${load0.map((l) => l.toFixed(2)).join(' / ')}, at end ${load1.map((l) => l.toFixed(2)).join(' / ')}`,
    '',
    '### Load scenarios',
    '',
    'req/s and latencies are the means over the rounds (± is half the spread of req/s between rounds); peak RSS is the highest VmHWM of the server process during any round (reset before each round through /proc/PID/clear_refs). "server CPU" and "load CPU" are shares of one core; "other CPU" is what the rest of the machine used meanwhile (other work disturbs the figures). "vs node-soap" is our req/s over node-soap\'s. "bound by": server when the server used ≥ 85% of its core, load gen when the load generator did (the server had room: its rate is a floor), neither when the machine\'s other work held both back. "failed" counts non-2xx answers, socket errors and time-outs under load' + failedNote(opts) + '.',
    '',
    resultsTable(scenarios, results),
    '',
    '### Targets',
    '',
    targetsTable(targets),
    '',
    ...(growth.length === 0
      ? []
      : [
          '### Growth: GetStudentSchool over SOAP 1.1 with large schools',
          '',
          'A fresh server per size and target, one warm-up request, then sequential requests on fresh connections; every answer checked. Peak RSS is the process\'s VmHWM over its whole life (start, warm-up, requests).',
          '',
          growthTable(growth),
          '',
        ]),
  ].join('\n');

  say('');
  say(resultsTable(scenarios, results));
  say('');
  say(targetsTable(targets));
  if (growth.length > 0) {
    say('');
    say(growthTable(growth));
  }
  const out = opts.out ?? join(work, 'RESULTS.md');
  writeResults(out, report);
  say(`\nWritten to ${out} (${fmt(seconds)} s)`);
  if (opts.out !== null) rmSync(work, { recursive: true, force: true });
  const failed = [...results.values()].some((m) => [...m.values()].some((r) => r.bad > 0));
  if (failed) process.exitCode = 1;
}

const badOf = (l: LoadResult): number => l.non2xx + l.errors + l.timeouts + l.mismatches;

/** What "failed" can see under load, which depends on the generator and on BENCH_EXPECT_BODY. */
function failedNote(opts: Options): string {
  const checked = 'and answers of ours and the ceiling whose body differs from the expected one (BENCH_EXPECT_BODY=1)';
  if (opts.generator === 'autocannon') return opts.expectBody ? `, ${checked}` : '';
  return opts.expectBody
    ? `, ${checked}; wrk hands every answer to a Lua check, which slows it`
    : '; wrk counts only statuses ≥ 400 as failed, so a 3xx would pass unseen here (the checks before and after the runs compare status and body)';
}

async function loadRun(
  s: Scenario,
  server: Server,
  opts: Options,
  seconds: number,
  loadCore: string | null,
  work: string,
): Promise<RunRecord> {
  const spec: LoadSpec = {
    generator: opts.generator,
    url: `${server.base}${pathFor(s, server.target)}`,
    method: s.request.method,
    headers: s.request.headers,
    ...(s.request.body === undefined ? {} : { body: s.request.body }),
    connections: opts.connections,
    duration: seconds,
    ...(opts.expectBody && server.target !== 'node-soap' ? { expectBody: s.expected.body } : {}),
  };
  const file = join(work, 'load-spec.json');
  writeFileSync(file, JSON.stringify(spec));
  const busy0 = machineBusySeconds();
  const self0 = process.cpuUsage();
  const sampler = new PeakSampler(server.child.pid);
  const out = await runChild(nodeCommand(loadCore, [join(BENCH_DIST, 'load-worker.js'), file]));
  const srv = sampler.finish();
  const self = process.cpuUsage(self0);
  // JSON has no NaN: a run without a single answer reports its latencies as null.
  const load = JSON.parse(out, (_k, v: unknown) => (v === null ? NaN : v)) as LoadResult;
  const others = machineBusySeconds() - busy0 - srv.cpuSeconds - load.cpuTotal - (self.user + self.system) / 1e6;
  // Keep-alive sockets close and the server settles before the next target starts.
  await new Promise((r) => setTimeout(r, 250));
  // Work for requests still queued when the generator stopped lands after its window: a pinned
  // server cannot use more than its one core, so the share is capped there.
  const serverCpu = srv.cpuSeconds / load.seconds;
  return { load, peakRss: srv.peakRss, serverCpu: loadCore === null ? serverCpu : Math.min(1, serverCpu), otherCpu: Math.max(0, others / srv.seconds) };
}

/** GetStudentSchool of 10,000 and 100,000 students: time per request and the server's peak RSS. */
async function growthCheck(opts: Options, serverCore: string | null, work: string): Promise<GrowthRecord[]> {
  const sizes = opts.quick ? [GROWTH_SIZES[0]] : [...GROWTH_SIZES];
  const data = growthDataset(sizes);
  writeFileSync(join(work, 'growth.json'), JSON.stringify(data));
  const db = join(work, 'growth.sqlite');
  await importDataset(join(work, 'growth.json'), db);
  const out: GrowthRecord[] = [];
  for (const n of sizes) {
    const s = growthScenario(data, n);
    for (const target of ['ours', 'node-soap'] as const) {
      const server = target === 'ours' ? await startOurs(serverCore, db, join(work, 'growth.log')) : await startPeer(serverCore, db, join(work, 'wsdl'));
      const idleRss = memoryOf(server.child.pid)?.rss ?? NaN;
      const count = opts.quick ? 1 : n >= 100_000 ? 3 : 5;
      const times: number[] = [];
      let bytes = NaN;
      let error: string | undefined;
      try {
        for (let i = 0; i <= count; i++) {
          const a = await send(server.base, pathFor(s, target), s.request, 300_000);
          const problem = verify(s, target, a);
          if (problem !== null) throw new Error(problem);
          bytes = a.body.length;
          if (i > 0) times.push(a.ms);
        }
      } catch (err) {
        error = err instanceof Error ? err.message.slice(0, 120) : String(err);
      }
      const peakRss = memoryOf(server.child.pid)?.hwm ?? NaN;
      await server.child.stop();
      const rec: GrowthRecord = {
        students: n,
        target,
        bytes,
        msMedian: median(times),
        msMin: Math.min(...times),
        requests: times.length,
        idleRss,
        peakRss,
        ...(error === undefined ? {} : { error }),
      };
      out.push(rec);
      say(
        `growth ${fmt(n)} ${target.padEnd(9)} ${fmt(rec.msMedian, 1)} ms/request  answer ${fmt(bytes / 2 ** 20, 1)} MiB  peak RSS ${fmt(peakRss / 2 ** 20, 1)} MiB${error === undefined ? '' : `  ERROR ${error}`}`,
      );
    }
  }
  return out;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
