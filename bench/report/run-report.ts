/** What a run reports: its block for RESULTS.md, and the same tables on stdout. */
import type { RunOptions } from '../load/run-options.js';
import type { Scenario } from '../scenarios/scenario.js';
import { fmt, say } from './print.js';
import { growthTable, resultsTable, targetsTable } from './report.js';
import type { GrowthRecord, Results, Target } from './report.js';

/** The settings that shape the figures, repeated in the report's command line when set. */
const REPORTED_ENV = [
  'BENCH_SECONDS',
  'BENCH_CONNECTIONS',
  'BENCH_ROUNDS',
  'BENCH_WARMUP',
  'BENCH_QUICK',
  'BENCH_ONLY',
  'BENCH_GROWTH',
  'BENCH_EXPECT_BODY',
  'BENCH_LOAD',
  'BENCH_NICE',
  'BENCH_SILENT',
  'BENCH_NECESSARY',
  'BENCH_DATABASE_URL',
  'SIS_LOG_SUCCESS_SAMPLE',
  'SIS_ANSWER_CACHE_BYTES',
];

/** When and where the run happened, for the report's head. */
export interface RunFacts {
  readonly startedAt: Date;
  /** Wall time of the whole run. */
  readonly seconds: number;
  readonly machine: readonly string[];
  readonly load0: readonly number[];
  readonly load1: readonly number[];
}

export interface RunTables {
  readonly scenarios: readonly Scenario[];
  readonly results: Results;
  readonly targets: readonly Target[];
  readonly growth: readonly GrowthRecord[];
}

/** The run's block in RESULTS.md (Markdown). */
export function reportBlock(opts: RunOptions, run: RunFacts, t: RunTables): string {
  // A database URL's password stays out of the report.
  const env = REPORTED_ENV.filter((k) => process.env[k] !== undefined).map(
    (k) => `${k}=${(process.env[k] ?? '').replace(/\/\/[^@/]*@/, '//***@')}`,
  );
  return [
    `## Run of ${run.startedAt.toISOString()}`,
    '',
    `Command: \`${[...env, 'npm run bench'].join(' ')}\` — ${opts.rounds} round(s) of ${opts.seconds} s per target and scenario, ${opts.connections} connections, ${opts.warmup} s warm-up per target and scenario before its first round; ${fmt(run.seconds)} s in all.`,
    '',
    ...run.machine.map((f) => `- ${f}`),
    `- Load average (1/5/15 min) at start ${run.load0.map((l) => l.toFixed(2)).join(' / ')}, at end ${run.load1.map((l) => l.toFixed(2)).join(' / ')}`,
    '',
    '### Load scenarios',
    '',
    'req/s and latencies are the means over the rounds (± is half the spread of req/s between rounds); peak RSS is the highest VmHWM of the server process during any round (reset before each round through /proc/PID/clear_refs). "server CPU" and "load CPU" are shares of one core; "CPU µs/req" is the server\'s CPU time per answer (server CPU over req/s). "other CPU" is what the rest of the machine used meanwhile (other work disturbs the figures). "vs necessary" is our req/s over the necessary-work server\'s (only the work the answer needs, on the same database), "vs node-soap" our req/s over node-soap\'s. "bound by": server when the server used ≥ 85% of its core, load gen when the load generator did (the server had room: its rate is a floor), neither when the machine\'s other work held both back. "failed" counts non-2xx answers, socket errors and time-outs under load' +
      failedNote(opts) +
      '.',
    '',
    resultsTable(t.scenarios, t.results),
    '',
    '### Targets',
    '',
    targetsTable(t.targets),
    '',
    ...(t.growth.length === 0
      ? []
      : [
          '### Growth: GetStudentSchool over SOAP 1.1 with large schools',
          '',
          "A fresh server per size and target, one warm-up request, then sequential requests on fresh connections; every answer checked. Peak RSS is the process's VmHWM over its whole life (start, warm-up, requests).",
          '',
          growthTable(t.growth),
          '',
        ]),
  ].join('\n');
}

/** The tables of the report, on stdout. */
export function printTables(t: RunTables): void {
  say('');
  say(resultsTable(t.scenarios, t.results));
  say('');
  say(targetsTable(t.targets));
  if (t.growth.length > 0) {
    say('');
    say(growthTable(t.growth));
  }
}

/** What "failed" can see under load, which depends on the generator and on BENCH_EXPECT_BODY. */
function failedNote(opts: RunOptions): string {
  const checked = 'and answers of ours and the ceiling whose body differs from the expected one (BENCH_EXPECT_BODY=1)';
  if (opts.generator === 'autocannon') return opts.expectBody ? `, ${checked}` : '';
  return opts.expectBody
    ? `, ${checked}; wrk hands every answer to a Lua check, which slows it`
    : '; wrk counts only statuses ≥ 400 as failed, so a 3xx would pass unseen here (the checks before and after the runs compare status and body)';
}
