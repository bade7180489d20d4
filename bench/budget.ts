/**
 * What "a share of the necessary work" means in microseconds. The necessary-work server is run
 * as it is and with N µs of pure CPU work added to each answer (a busy wait: no memory, no
 * system call), beside ours as `npm start` runs it and ours with LOG_LEVEL=silent, rounds
 * alternating. The report gives, for each, requests per second and CPU µs a request, and reads
 * off the spin curve how many µs of extra work a request ours corresponds to, and how many µs
 * the goal of 0.85 of the necessary work leaves for everything the service does beyond it.
 *
 * Why it is needed: the extra work is not paid once. Measured, spin costs the necessary server
 * more CPU a request than the spin itself (RESULTS.md, where the time goes): a server that answers less often is woken more often per request (one
 * request per event-loop turn, the load generator's wake-ups in every write), so every added µs
 * makes the rest dearer too.
 *
 * Usage: node dist/bench/budget.js [SCENARIO_ID]   (default token-soap11; BENCH_SPINS=0,5,10,20,30,
 * BENCH_SECONDS=4, BENCH_ROUNDS=3, BENCH_CONNECTIONS=50, BENCH_NICE as for the run).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseGenerator } from './load/generator.js';
import { cpuSecondsOf } from './load/proc-stat.js';
import { BENCH_DIST, cores, nodeCommand, pinSelf, runChild } from './load/processes.js';
import type { LoadResult, LoadSpec } from './load/spec.js';
import { median } from './report/stats.js';
import { mainDataset } from './scenarios/datasets.js';
import { pathFor } from './scenarios/scenario.js';
import type { Scenario } from './scenarios/scenario.js';
import { scenarios } from './scenarios/scenarios.js';
import { checkOnce } from './targets/http-check.js';
import { importDataset, startNecessary, startOurs } from './targets/servers.js';
import type { Server } from './targets/servers.js';

const env = process.env;
const id = process.argv[2] ?? 'token-soap11';
const spins = (env['BENCH_SPINS'] ?? '0,5,10,20,30').split(',').map(Number);
const seconds = Number(env['BENCH_SECONDS'] ?? 4);
const rounds = Number(env['BENCH_ROUNDS'] ?? 3);
const connections = Number(env['BENCH_CONNECTIONS'] ?? 50);
const GOAL = 0.85;

interface Row {
  readonly label: string;
  /** µs of spin a request; null for ours. */
  readonly spin: number | null;
  readonly server: Server;
  readonly rps: number[];
  readonly cpu: number[];
}

async function main(): Promise<void> {
  const core = cores(cpus().length);
  pinSelf(core.load);
  const work = mkdtempSync(join(tmpdir(), 'sis-budget-'));
  const data = mainDataset();
  const s = scenarios(data).find((x) => x.id === id && x.necessary !== undefined);
  if (s === undefined) throw new Error(`no scenario ${id} with a necessary-work route`);
  writeFileSync(join(work, 'main.json'), JSON.stringify(data));
  const db = join(work, 'main.sqlite');
  await importDataset(join(work, 'main.json'), db);
  const rows: Row[] = [];
  const row = (label: string, spin: number | null, server: Server): Row => ({ label, spin, server, rps: [], cpu: [] });
  try {
    for (const spin of spins) {
      env['NECESSARY_SPIN_US'] = String(spin);
      rows.push(row(`necessary + ${spin} µs`, spin, await startNecessary(core.server, [s], db, work)));
    }
    delete env['NECESSARY_SPIN_US'];
    rows.push(row('ours', null, await startOurs(core.server, db, join(work, 'ours.log'))));
    rows.push(row('ours, silent', null, await startOurs(core.server, db, join(work, 'ours.log'), { silent: true })));
    for (const r of rows) await checkOnce(s, r.server.target, r.server.base);
    // A warm-up round (not counted), then rounds alternating between every server.
    for (let round = 0; round <= rounds; round++)
      for (const r of rows) {
        const before = cpuSecondsOf(r.server.child.pid);
        const load = await loadRun(s, r.server, work, round === 0 ? 1 : seconds, core.load);
        if (round === 0) continue;
        r.rps.push(load.rps);
        r.cpu.push(((cpuSecondsOf(r.server.child.pid) - before) / load.responses) * 1e6);
      }
  } finally {
    await Promise.all(rows.map((r) => r.server.child.stop()));
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(report(s, rows));
}

async function loadRun(
  s: Scenario,
  server: Server,
  work: string,
  duration: number,
  core: string | null,
): Promise<LoadResult> {
  const spec: LoadSpec = {
    generator: chooseGenerator(env),
    url: `${server.base}${pathFor(s, server.target)}`,
    method: s.request.method,
    headers: s.request.headers,
    ...(s.request.body === undefined ? {} : { body: s.request.body }),
    connections,
    duration,
  };
  writeFileSync(join(work, 'spec.json'), JSON.stringify(spec));
  return JSON.parse(
    await runChild(nodeCommand(core, [join(BENCH_DIST, 'load/worker.js'), join(work, 'spec.json')])),
  ) as LoadResult;
}

/** The spin (µs) at which the necessary server's throughput falls to `rps`, by straight lines between measured points. */
function spinAt(curve: readonly { spin: number; rps: number }[], rps: number): string {
  for (let i = 1; i < curve.length; i++) {
    const a = curve[i - 1]!;
    const b = curve[i]!;
    if (rps <= a.rps && rps >= b.rps)
      return (a.spin + ((a.rps - rps) / (a.rps - b.rps || 1)) * (b.spin - a.spin)).toFixed(1);
  }
  const last = curve[curve.length - 1];
  return last !== undefined && rps < last.rps ? `> ${last.spin}` : '< 0';
}

function report(s: Scenario, rows: readonly Row[]): string {
  const curve = rows
    .filter((r) => r.spin !== null)
    .map((r) => ({ spin: r.spin!, rps: median(r.rps) }))
    .sort((a, b) => a.spin - b.spin);
  const base = curve.find((p) => p.spin === 0)?.rps ?? NaN;
  const lines = [
    `${s.title} (${s.binding}): ${rounds} rounds of ${seconds} s at ${connections} connections, medians`,
    '',
    '| server | req/s | vs necessary | CPU µs/request | as necessary + µs of spin |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const rps = median(r.rps);
    const share = `${Math.round((rps / base) * 100)} %`;
    lines.push(
      `| ${r.label} | ${Math.round(rps).toLocaleString('en-US')} | ${share} | ${median(r.cpu).toFixed(1)} | ${r.spin === null ? spinAt(curve, rps) : ''} |`,
    );
  }
  lines.push(
    '',
    `${GOAL} of the necessary work (${Math.round(base * GOAL).toLocaleString('en-US')} req/s) = necessary + ${spinAt(curve, base * GOAL)} µs of spin a request.`,
  );
  return `${lines.join('\n')}\n`;
}

main().catch((err: unknown) => {
  process.stderr.write(`budget: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
