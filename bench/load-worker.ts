/**
 * One load run with autocannon, in its own process so it can sit on its own core.
 * Usage: node dist/bench/load-worker.js SPEC.json; prints one LoadResult as JSON.
 *
 * Latencies are kept here, per response, from autocannon's own hrtime measurement: its histogram
 * rounds to whole milliseconds, too coarse for answers that take a fraction of one.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';
import { percentile } from './stats.js';

export interface LoadSpec {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly connections: number;
  /** Seconds. */
  readonly duration: number;
  /** Every answer's body must equal this (autocannon counts mismatches); off when absent. */
  readonly expectBody?: string;
}

export interface LoadResult {
  readonly responses: number;
  readonly seconds: number;
  readonly rps: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly mismatches: number;
  /** Share of one core the load generator used during the run. */
  readonly cpu: number;
  /** CPU seconds of the whole worker process, start-up included. */
  readonly cpuTotal: number;
  readonly bytes: number;
}

interface AutocannonResult {
  readonly duration: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly mismatches: number;
  readonly '2xx': number;
}
type Tracker = EventEmitter & PromiseLike<AutocannonResult>;
type Autocannon = (opts: Record<string, unknown>) => Tracker;

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

async function main(spec: LoadSpec): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const tracker = autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    body: spec.body,
    connections: spec.connections,
    duration: spec.duration,
    pipelining: 1,
    timeout: 30,
    ...(spec.expectBody === undefined ? {} : { expectBody: spec.expectBody }),
  });
  tracker.on('response', (_client: unknown, status: number, resBytes: number, ms: number) => {
    if (status < 200 || status > 299) return;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
    bytes += resBytes;
  });
  const result = await tracker;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const used = process.cpuUsage(cpu0);
  const total = process.cpuUsage();
  const sorted = latencies.subarray(0, count).sort();
  return {
    responses: count,
    seconds,
    rps: count / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: count === 0 ? NaN : sorted[count - 1]!,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    cpu: (used.user + used.system) / 1e6 / seconds,
    cpuTotal: (total.user + total.system) / 1e6,
    bytes,
  };
}

const file = process.argv[2];
if (file === undefined) throw new Error('usage: load-worker SPEC.json');
// A file, not an argument: an expected body can pass the kernel's 128 KiB limit on one argument.
main(JSON.parse(readFileSync(file, 'utf8')) as LoadSpec).then(
  (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
