/**
 * The load part of a run: every target started, every answer checked, then the timed rounds,
 * targets taking turns in an order that rotates from round to round so slow drift of the
 * machine falls on all of them alike; the answers are checked again after.
 */
import { join } from 'node:path';
import { fmt, say } from '../report/print.js';
import { summarize } from '../report/report.js';
import type { RunRecord, Summary } from '../report/report.js';
import { targetsOf } from '../scenarios/scenario.js';
import type { Scenario, TargetChoice, TargetName } from '../scenarios/scenario.js';
import { checkOnce } from '../targets/http-check.js';
import { fetchWsdl, startCeiling, startNecessary, startOurs, startPeer } from '../targets/servers.js';
import type { Server } from '../targets/servers.js';
import type { Cores } from './processes.js';
import type { RunOptions } from './run-options.js';
import { badOf, loadRun } from './run.js';

type Servers = Map<TargetName, Server>;

/** Each scenario's summary per target, by scenario id. */
export type ScenarioResults = Map<string, Map<TargetName, Summary>>;

/** Starts every target and loads each scenario on it; the servers are stopped however it ends. */
export async function measureScenarios(
  opts: RunOptions,
  core: Cores,
  scenarios: readonly Scenario[],
  mainDb: string,
  work: string,
): Promise<ScenarioResults> {
  const servers: Servers = new Map();
  try {
    await startTargets(servers, opts, core.server, scenarios, mainDb, work);
    // Correctness first: a wrong answer stops the benchmark before anything is timed.
    await checkAnswers(scenarios, servers, opts);
    say(`Answers checked: ${scenarios.length} scenarios, every target`);
    const runs = await runRounds(scenarios, servers, opts, core.load, work);
    // And after: load must not have changed an answer.
    await checkAnswers(scenarios, servers, opts);
    return summaries(scenarios, runs, opts);
  } finally {
    await Promise.all([...servers.values()].map((s) => s.child.stop()));
  }
}

/** Ours (and ours with LOG_LEVEL=silent), node-soap on the WSDL fetched from ours, the ceiling, the necessary work. */
async function startTargets(
  servers: Servers,
  opts: RunOptions,
  serverCore: string | null,
  scenarios: readonly Scenario[],
  mainDb: string,
  work: string,
): Promise<void> {
  const ours = await startOurs(serverCore, mainDb, join(work, 'ours.log'));
  servers.set('ours', ours);
  if (opts.silent)
    servers.set('ours-silent', await startOurs(serverCore, mainDb, join(work, 'ours-silent.log'), { silent: true }));
  await fetchWsdl(ours, join(work, 'wsdl'));
  servers.set('node-soap', await startPeer(serverCore, mainDb, join(work, 'wsdl')));
  servers.set('ceiling', await startCeiling(serverCore, scenarios, work));
  if (opts.necessary) servers.set('necessary', await startNecessary(serverCore, scenarios, mainDb, work));
}

async function checkAnswers(scenarios: readonly Scenario[], servers: Servers, choice: TargetChoice): Promise<void> {
  for (const s of scenarios) for (const t of targetsOf(s, choice)) await checkOnce(s, t, servers.get(t)!.base);
}

const runKey = (s: Scenario, t: TargetName): string => `${s.id}\u0000${t}`;

/** Every round of every scenario on every target, each run printed as it ends; keyed by runKey. */
async function runRounds(
  scenarios: readonly Scenario[],
  servers: Servers,
  opts: RunOptions,
  loadCore: string | null,
  work: string,
): Promise<Map<string, RunRecord[]>> {
  const runs = new Map<string, RunRecord[]>();
  const total = opts.rounds * scenarios.reduce((n, s) => n + targetsOf(s, opts).length, 0);
  let done = 0;
  for (let round = 0; round < opts.rounds; round++) {
    for (const [i, s] of scenarios.entries()) {
      const targets = targetsOf(s, opts);
      const shift = (round + i) % targets.length;
      const order = [...targets.slice(shift), ...targets.slice(0, shift)];
      for (const t of order) {
        const server = servers.get(t)!;
        if (round === 0 && opts.warmup > 0) await loadRun(s, server, opts, opts.warmup, loadCore, work);
        const r = await loadRun(s, server, opts, opts.seconds, loadCore, work);
        runs.set(runKey(s, t), [...(runs.get(runKey(s, t)) ?? []), r]);
        done++;
        say(progressLine(`[${done}/${total}]`, s, t, r));
      }
    }
  }
  return runs;
}

function progressLine(count: string, s: Scenario, t: TargetName, r: RunRecord): string {
  return `${count} ${s.id.padEnd(18)} ${t.padEnd(9)} ${fmt(r.load.rps).padStart(7)} req/s  p50 ${fmt(r.load.p50, 2)} ms  p99 ${fmt(r.load.p99, 2)} ms  RSS ${fmt(r.peakRss / 2 ** 20, 1)} MiB  server CPU ${fmt(r.serverCpu * 100)}%  load CPU ${fmt(r.load.cpu * 100)}%  other ${fmt(r.otherCpu * 100)}%${badOf(r.load) > 0 ? `  FAILED ${badOf(r.load)}` : ''}`;
}

function summaries(
  scenarios: readonly Scenario[],
  runs: ReadonlyMap<string, RunRecord[]>,
  choice: TargetChoice,
): ScenarioResults {
  const results: ScenarioResults = new Map();
  for (const s of scenarios) {
    const byTarget = new Map<TargetName, Summary>();
    for (const t of targetsOf(s, choice)) byTarget.set(t, summarize(runs.get(runKey(s, t)) ?? []));
    results.set(s.id, byTarget);
  }
  return results;
}
