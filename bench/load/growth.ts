/**
 * The growth check: GetStudentSchool of 10,000 and 100,000 students over SOAP 1.1, ours against
 * node-soap, a fresh server per size and target: time per request and the server's peak RSS.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, say } from '../report/print.js';
import type { GrowthRecord } from '../report/report.js';
import { median } from '../report/stats.js';
import { GROWTH_SIZES, growthDataset } from '../scenarios/datasets.js';
import { pathFor } from '../scenarios/scenario.js';
import type { Scenario, TargetName } from '../scenarios/scenario.js';
import { growthScenario } from '../scenarios/scenarios.js';
import { send, verify } from '../targets/http-check.js';
import { importDataset, startOurs, startPeer } from '../targets/servers.js';
import type { Server } from '../targets/servers.js';
import { memoryOf } from './processes.js';
import type { RunOptions } from './run-options.js';

export async function growthCheck(opts: RunOptions, serverCore: string | null, work: string): Promise<GrowthRecord[]> {
  const sizes = opts.quick ? [GROWTH_SIZES[0]] : [...GROWTH_SIZES];
  const data = growthDataset(sizes);
  writeFileSync(join(work, 'growth.json'), JSON.stringify(data));
  const db = join(work, 'growth.sqlite');
  await importDataset(join(work, 'growth.json'), db);
  const out: GrowthRecord[] = [];
  for (const n of sizes) {
    const s = growthScenario(data, n);
    for (const target of ['ours', 'node-soap'] as const) {
      const server =
        target === 'ours'
          ? await startOurs(serverCore, db, join(work, 'growth.log'))
          : await startPeer(serverCore, db, join(work, 'wsdl'));
      const idleRss = memoryOf(server.child.pid)?.rss ?? NaN;
      const count = opts.quick ? 1 : n >= 100_000 ? 3 : 5;
      const { times, bytes, error } = await timedRequests(server, s, target, count);
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

interface Timed {
  readonly times: number[];
  readonly bytes: number;
  readonly error: string | undefined;
}

/** One warm-up request, then `count` timed ones on fresh connections, every answer checked. */
async function timedRequests(server: Server, s: Scenario, target: TargetName, count: number): Promise<Timed> {
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
  return { times, bytes, error };
}
