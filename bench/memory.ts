/**
 * `node dist/bench/memory.js`: peak RSS and throughput of ours (`sis serve` with `npm start`'s
 * defaults) under the benchmark's load, for each Node runtime and V8 heap setting given, so the
 * settings the service ships with are chosen by measurement (issue 45). Each configuration gets
 * a fresh server per round; configurations take turns and their order rotates from round to
 * round, so a busy neighbour hits them alike. Peak RSS is the server's (VmHWM and 50 ms samples)
 * over the round's runs; rates are wrk's (or autocannon's), noisy on a shared machine, the peaks
 * are not.
 *
 * Environment: BENCH_NODES (comma-separated node binaries; default the one running this),
 * BENCH_FLAGS (`;`-separated sets of node flags, each space-separated; an empty set is the
 * runtime's own defaults, `npm start`'s are --max-semi-space-size=16; default `;--max-semi-space-size=16`), BENCH_ONLY (scenario ids regex;
 * default `^(token-soap11|school1000-soap11)$`), BENCH_COMPARE=1 (ours in compare mode, SAMPLE 1,
 * beside a second instance of ours as the legacy service), BENCH_SECONDS (10), BENCH_ROUNDS (2),
 * BENCH_CONNECTIONS (50), BENCH_LOAD.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cores, pinSelf } from './load/processes.js';
import { runOptions } from './load/run-options.js';
import { badOf, loadRun } from './load/run.js';
import { fmt, say } from './report/print.js';
import { median } from './report/stats.js';
import { mainDataset } from './scenarios/datasets.js';
import { scenarios as allScenarios } from './scenarios/scenarios.js';
import { importDataset, startOurs } from './targets/servers.js';
import type { Server } from './targets/servers.js';

interface Config {
  readonly label: string;
  readonly node: string;
  readonly flags: readonly string[];
}

async function main(): Promise<void> {
  const env = { BENCH_SECONDS: '10', BENCH_ONLY: '^(token-soap11|school1000-soap11)$', ...process.env };
  const opts = runOptions(env);
  const core = cores(cpus().length);
  pinSelf(core.load);
  const nodes = (process.env['BENCH_NODES'] ?? process.execPath).split(',').filter((n) => n !== '');
  const flagSets = (process.env['BENCH_FLAGS'] ?? ';--max-semi-space-size=16')
    .split(';')
    .map((f) => f.split(' ').filter((x) => x !== ''));
  const compare = process.env['BENCH_COMPARE'] === '1';
  const configs: Config[] = nodes.flatMap((node) => {
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    return flagSets.map((flags) => ({
      label: `${version} ${flags.join(' ') || "(the runtime's defaults)"}`,
      node,
      flags,
    }));
  });
  const work = mkdtempSync(join(tmpdir(), 'sis-memory-'));
  const data = mainDataset();
  const scenarios = allScenarios(data).filter((s) => opts.only === null || opts.only.test(s.id));
  writeFileSync(join(work, 'main.json'), JSON.stringify(data));
  const db = join(work, 'main.sqlite');
  await importDataset(join(work, 'main.json'), db);
  say(
    `${configs.length} configurations × ${scenarios.map((s) => s.id).join(', ')}; ${opts.rounds} rounds of ${opts.seconds} s, ${opts.connections} connections, ${opts.generator}${compare ? ', compare mode' : ''}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  // label → scenario → per-round figures
  const rps = new Map<string, Map<string, number[]>>();
  const peaks = new Map<string, number[]>();
  const cpu = new Map<string, Map<string, number[]>>();
  let legacy: Server | null = null;
  try {
    if (compare) legacy = await startOurs(null, db, join(work, 'legacy.log'));
    for (let round = 0; round < opts.rounds; round++) {
      const order = configs.map((_, i) => configs[(i + round) % configs.length]!);
      for (const c of order) {
        const shadow: Record<string, string> =
          legacy === null ? {} : { SIS_SHADOW: 'compare', SIS_SHADOW_SAMPLE: '1', SIS_LEGACY_URL: `${legacy.base}/` };
        const server = await startOurs(core.server, db, join(work, 'ours.log'), {
          node: c.node,
          nodeFlags: c.flags,
          env: shadow,
        });
        let peak = 0;
        try {
          for (const s of scenarios) {
            await loadRun(s, server, opts, opts.warmup, core.load, work);
            const r = await loadRun(s, server, opts, opts.seconds, core.load, work);
            if (badOf(r.load) > 0) say(`  ${c.label} ${s.id}: ${badOf(r.load)} answers failed`);
            peak = Math.max(peak, r.peakRss);
            let perScenario = rps.get(c.label);
            if (perScenario === undefined) rps.set(c.label, (perScenario = new Map()));
            perScenario.set(s.id, [...(perScenario.get(s.id) ?? []), r.load.rps]);
            // The server's CPU time per answer: steadier than the rate when other work shares the machine.
            const us = ((r.serverCpu * r.load.seconds) / Math.max(1, r.load.responses)) * 1e6;
            let perCpu = cpu.get(c.label);
            if (perCpu === undefined) cpu.set(c.label, (perCpu = new Map()));
            perCpu.set(s.id, [...(perCpu.get(s.id) ?? []), us]);
            say(
              `  round ${round + 1} ${c.label} ${s.id}: ${fmt(r.load.rps)} req/s, ${fmt(us)} CPU µs/answer, peak ${fmt(r.peakRss / 2 ** 20)} MiB`,
            );
          }
        } finally {
          await server.child.stop();
        }
        peaks.set(c.label, [...(peaks.get(c.label) ?? []), peak]);
      }
    }
  } finally {
    await legacy?.child.stop();
  }
  say(
    `\n| Runtime, flags | ${scenarios.map((s) => `${s.id} req/s (rounds) | CPU µs/answer`).join(' | ')} | peak RSS MiB (rounds) |`,
  );
  say(`|---|${scenarios.map(() => '---:|---:|').join('')}---:|`);
  for (const c of configs) {
    const cells = scenarios.map((s) => {
      const v = rps.get(c.label)?.get(s.id) ?? [];
      const u = cpu.get(c.label)?.get(s.id) ?? [];
      return `${fmt(median(v))} (${v.map((x) => fmt(x)).join(', ')}) | ${u.map((x) => fmt(x)).join(', ')}`;
    });
    const p = (peaks.get(c.label) ?? []).map((x) => x / 2 ** 20);
    say(`| ${c.label} | ${cells.join(' | ')} | ${p.map((x) => x.toFixed(0)).join(', ')} |`);
  }
  say(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  rmSync(work, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`memory: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
