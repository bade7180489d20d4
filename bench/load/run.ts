/** One timed run of one scenario against one target: the load generator's figures and the server's. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRecord } from '../report/report.js';
import { pathFor } from '../scenarios/scenario.js';
import type { Scenario } from '../scenarios/scenario.js';
import type { Server } from '../targets/servers.js';
import { BENCH_DIST, PeakSampler, machineBusySeconds, nodeCommand, runChild } from './processes.js';
import type { RunOptions } from './run-options.js';
import type { LoadResult, LoadSpec } from './spec.js';

/** Answers that failed under load: non-2xx, socket errors, time-outs and bodies that differ. */
export const badOf = (l: LoadResult): number => l.non2xx + l.errors + l.timeouts + l.mismatches;

export async function loadRun(
  s: Scenario,
  server: Server,
  opts: RunOptions,
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
  const out = await runChild(nodeCommand(loadCore, [join(BENCH_DIST, 'load/worker.js'), file]));
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
  return {
    load,
    peakRss: srv.peakRss,
    serverCpu: loadCore === null ? serverCpu : Math.min(1, serverCpu),
    otherCpu: Math.max(0, others / srv.seconds),
  };
}
