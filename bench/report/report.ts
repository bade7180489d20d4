import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { LoadResult } from '../load/spec.js';
import { isOurs } from '../scenarios/scenario.js';
import type { Scenario, TargetName } from '../scenarios/scenario.js';
import { mean } from './stats.js';

/** One measured run: the load generator's view and the server's. */
export interface RunRecord {
  readonly load: LoadResult;
  readonly peakRss: number;
  /** Share of one core the server used during the run. */
  readonly serverCpu: number;
  /** Share of one core used by everything else on the machine (other work disturbs the figures). */
  readonly otherCpu: number;
}

/** The rounds of one scenario on one target, summed up. */
export interface Summary {
  readonly rps: number;
  readonly rpsMin: number;
  readonly rpsMax: number;
  readonly p50: number;
  readonly p99: number;
  readonly peakRss: number;
  readonly serverCpu: number;
  readonly loadCpu: number;
  readonly otherCpu: number;
  /** Non-2xx answers, socket errors, time-outs and body mismatches: any is a failed run. */
  readonly bad: number;
  readonly runs: number;
}

export function summarize(runs: readonly RunRecord[]): Summary {
  const rps = runs.map((r) => r.load.rps);
  return {
    rps: mean(rps),
    rpsMin: Math.min(...rps),
    rpsMax: Math.max(...rps),
    p50: mean(runs.map((r) => r.load.p50)),
    p99: mean(runs.map((r) => r.load.p99)),
    peakRss: Math.max(...runs.map((r) => r.peakRss)),
    serverCpu: mean(runs.map((r) => r.serverCpu)),
    loadCpu: mean(runs.map((r) => r.load.cpu)),
    otherCpu: mean(runs.map((r) => r.otherCpu)),
    bad: runs.reduce((n, r) => n + r.load.non2xx + r.load.errors + r.load.timeouts + r.load.mismatches, 0),
    runs: runs.length,
  };
}

export type Results = ReadonlyMap<string, ReadonlyMap<TargetName, Summary>>;

export interface GrowthRecord {
  readonly students: number;
  readonly target: TargetName;
  readonly bytes: number;
  readonly msMedian: number;
  readonly msMin: number;
  readonly requests: number;
  /** RSS after start, before the first request, and the process's peak (VmHWM), in bytes. */
  readonly idleRss: number;
  readonly peakRss: number;
  readonly error?: string;
}

export interface Target {
  readonly name: string;
  readonly measured: string;
  readonly goal: string;
  readonly met: boolean | null;
}

export const mib = (b: number): string => (Number.isFinite(b) ? (b / 1048576).toFixed(1) : 'n/a');
export const fixed = (n: number, d: number): string => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
export const ratio = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '');
export const pct = (n: number): string => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : 'n/a');
export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

export function table(head: readonly string[], rows: readonly (readonly string[])[], align: string): string {
  const cells = [head, ...rows];
  const widths = head.map((_, i) => Math.max(3, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string =>
    `| ${r.map((c, i) => (align[i] === 'r' ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (align[i] === 'r' ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(head), rule, ...rows.map(line)].join('\n');
}

export function resultsTable(scenarios: readonly Scenario[], results: Results): string {
  const head = [
    'Scenario',
    'Binding',
    'Target',
    'req/s',
    '±',
    'vs ceiling',
    'vs necessary',
    'vs node-soap',
    'vs silent',
    'p50 ms',
    'p50 vs ceiling',
    'p99 ms',
    'p99 vs ceiling',
    'peak RSS MiB',
    'RSS vs ceiling',
    'server CPU',
    'CPU µs/req',
    'load CPU',
    'other CPU',
    'bound by',
    'failed',
  ];
  const rows: string[][] = [];
  for (const s of scenarios) {
    const byTarget = results.get(s.id);
    if (byTarget === undefined) continue;
    const ceiling = byTarget.get('ceiling');
    const peer = byTarget.get('node-soap');
    const necessary = byTarget.get('necessary');
    const silent = byTarget.get('ours-silent');
    for (const [target, r] of byTarget) {
      rows.push([
        s.title,
        s.binding,
        target,
        int(r.rps),
        r.runs > 1 ? `${Math.round(((r.rpsMax - r.rpsMin) / 2 / r.rps) * 100)}%` : '',
        target === 'ceiling' || ceiling === undefined ? '' : pct(r.rps / ceiling.rps),
        isOurs(target) && necessary !== undefined ? pct(r.rps / necessary.rps) : '',
        isOurs(target) && peer !== undefined ? ratio(r.rps / peer.rps) : '',
        target === 'ours' && silent !== undefined ? pct(r.rps / silent.rps) : '',
        fixed(r.p50, 2),
        target === 'ceiling' || ceiling === undefined ? '' : ratio(r.p50 / ceiling.p50),
        fixed(r.p99, 2),
        target === 'ceiling' || ceiling === undefined ? '' : ratio(r.p99 / ceiling.p99),
        mib(r.peakRss),
        target === 'ceiling' || ceiling === undefined ? '' : ratio(r.peakRss / ceiling.peakRss),
        pct(r.serverCpu),
        fixed((r.serverCpu * 1e6) / r.rps, 0),
        pct(r.loadCpu),
        pct(r.otherCpu),
        boundBy(r),
        r.bad === 0 ? '0' : `**${r.bad}**`,
      ]);
    }
  }
  return table(head, rows, 'lllrrrrrrrrrrrrrrrrlr');
}

/**
 * Which side a run's rate says more about: a server near a full core measured itself; a load
 * generator near a full core measured itself, and the server could have gone faster.
 */
export function boundBy(r: Summary): string {
  if (r.serverCpu >= 0.85) return 'server';
  if (r.loadCpu >= 0.85) return 'load gen';
  return 'neither';
}

export function growthTable(records: readonly GrowthRecord[]): string {
  const head = [
    'Students',
    'Target',
    'answer MiB',
    'ms/request (median)',
    'ms (best)',
    'requests',
    'idle RSS MiB',
    'peak RSS MiB',
    'note',
  ];
  const rows = records.map((g) => [
    int(g.students),
    g.target,
    mib(g.bytes),
    fixed(g.msMedian, 1),
    fixed(g.msMin, 1),
    String(g.requests),
    mib(g.idleRss),
    mib(g.peakRss),
    g.error ?? '',
  ]);
  return table(head, rows, 'rlrrrrrrl');
}

export function targetsTable(targets: readonly Target[]): string {
  return table(
    ['Target', 'Measured', 'Goal', 'Status'],
    targets.map((t) => [t.name, t.measured, t.goal, t.met === null ? 'n/a' : t.met ? 'met' : '**MISSED**']),
    'llll',
  );
}

const BEGIN = '<!-- bench:begin (written by `npm run bench`; edit outside these markers) -->';
const END = '<!-- bench:end -->';

/** Replaces the generated part of the results file; notes written around it are kept. */
export function writeResults(file: string, generated: string): void {
  const block = `${BEGIN}\n${generated.trim()}\n${END}`;
  if (!existsSync(file)) {
    writeFileSync(file, `# Benchmark results\n\n${block}\n`);
    return;
  }
  const old = readFileSync(file, 'utf8');
  const a = old.indexOf(BEGIN);
  const b = old.indexOf(END);
  writeFileSync(
    file,
    a >= 0 && b > a ? `${old.slice(0, a)}${block}${old.slice(b + END.length)}` : `${old.trimEnd()}\n\n${block}\n`,
  );
}
