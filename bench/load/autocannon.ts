/**
 * One load run with autocannon, inside the load worker.
 *
 * Latencies are kept here, per response, from autocannon's own hrtime measurement: its histogram
 * rounds to whole milliseconds, too coarse for answers that take a fraction of one.
 */
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { percentile } from '../report/stats.js';
import type { LoadResult, LoadSpec } from './spec.js';

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

export async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  // Loaded here, not at the top: a wrk run does not need it.
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
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
