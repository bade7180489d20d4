/**
 * `npm run bench`: our service against a bare node:http ceiling, the necessary-work server and
 * node-soap, in one run.
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
 * LOG_LEVEL=silent), BENCH_NECESSARY=0 (skip the necessary-work server), BENCH_DATABASE_URL=postgres://… (every server on that database instead of a
 * SQLite file; its data is replaced; the necessary-work server, SQLite only, is then left out).
 *
 * Ours runs with the defaults of `npm start` (logging at info to stdout, a file here): the
 * figures are what users get. Settings in the environment (SIS_LOG_SUCCESS_SAMPLE, …) reach it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { growthCheck } from './load/growth.js';
import { cores, pinSelf } from './load/processes.js';
import { measureScenarios } from './load/rounds.js';
import { runOptions } from './load/run-options.js';
import { machineFacts } from './report/machine-facts.js';
import { fmt, say } from './report/print.js';
import { writeResults } from './report/report.js';
import { printTables, reportBlock } from './report/run-report.js';
import { evaluateTargets } from './report/targets.js';
import { mainDataset } from './scenarios/datasets.js';
import { scenarios as allScenarios } from './scenarios/scenarios.js';
import { importDataset } from './targets/servers.js';

async function main(): Promise<void> {
  const opts = runOptions(process.env);
  const core = cores(cpus().length);
  // The orchestrator only samples /proc while a run lasts; it stays off the server's core.
  pinSelf(core.load);
  const startedAt = new Date();
  const t0 = Date.now();
  const load0 = loadavg();
  const work = mkdtempSync(join(tmpdir(), 'sis-bench-'));
  const machine = machineFacts(core, opts.generator);
  machine.forEach((f) => say(f));
  say(
    `Runs of ${opts.seconds} s, ${opts.connections} connections, ${opts.rounds} round(s), ${opts.warmup} s warm-up; work dir ${work}`,
  );

  const data = mainDataset();
  const scenarios = allScenarios(data).filter((s) => opts.only === null || opts.only.test(s.id));
  writeFileSync(join(work, 'main.json'), JSON.stringify(data));
  const mainDb = join(work, 'main.sqlite');
  await importDataset(join(work, 'main.json'), mainDb);

  const results = await measureScenarios(opts, core, scenarios, mainDb, work);
  const growth = opts.growth ? await growthCheck(opts, core.server, work) : [];

  const load1 = loadavg();
  const seconds = (Date.now() - t0) / 1000;
  const tables = { scenarios, results, targets: evaluateTargets(scenarios, results, growth), growth };
  const report = reportBlock(opts, { startedAt, seconds, machine, load0, load1 }, tables);
  printTables(tables);
  const out = opts.out ?? join(work, 'RESULTS.md');
  writeResults(out, report);
  say(`\nWritten to ${out} (${fmt(seconds)} s)`);
  if (opts.out !== null) rmSync(work, { recursive: true, force: true });
  const failed = [...results.values()].some((m) => [...m.values()].some((r) => r.bad > 0));
  if (failed) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
