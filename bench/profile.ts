/**
 * Where our server's time goes under load: runs one scenario against our service started with
 * `node --cpu-prof`, then sums the profile by function (self and inclusive time) and by area
 * (our files, each package, node internals, GC, idle).
 *
 * Usage: node dist/bench/profile.js [SCENARIO_ID [TARGET]]   (default token-soap11 ours;
 * TARGET ours, ours-silent, ceiling, necessary or node-soap, to compare; BENCH_SECONDS=10, BENCH_CONNECTIONS=50,
 * BENCH_NICE and BENCH_LOAD as for the run; the .cpuprofile is kept and its path printed, for
 * Chrome DevTools).
 *        node dist/bench/profile.js FILE.cpuprofile  (sums up an existing profile).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseGenerator } from './load/generator.js';
import { BENCH_DIST, REPO_ROOT, cores, nodeCommand, pinSelf, runChild } from './load/processes.js';
import type { LoadResult, LoadSpec } from './load/spec.js';
import { mainDataset } from './scenarios/datasets.js';
import { TARGETS, pathFor } from './scenarios/scenario.js';
import type { TargetName } from './scenarios/scenario.js';
import { scenarios } from './scenarios/scenarios.js';
import { checkOnce } from './targets/http-check.js';
import { importDataset } from './targets/servers.js';
import { startTarget } from './targets/start-target.js';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const id = process.argv[2] ?? 'token-soap11';
const target = (process.argv[3] ?? 'ours') as TargetName;
if (!TARGETS.includes(target)) throw new Error(`unknown target ${target}; one of ${TARGETS.join(', ')}`);
const seconds = Number(process.env['BENCH_SECONDS'] ?? 10);
const connections = Number(process.env['BENCH_CONNECTIONS'] ?? 50);

/** Where a frame's code lives: our file, a package, node itself, or V8's pseudo-frames. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') return functionName === '' ? '(native, unnamed)' : `(${functionName.replace(/[()]/g, '')})`;
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return `package ${pkg[1]}`;
  const own = url.indexOf('/dist/');
  return own >= 0 ? url.slice(own + 6).replace(/\.js$/, '.ts') : url;
}

function label(frame: CallFrame): string {
  const where = areaOf(frame);
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  return frame.url === '' ? where : `${name} — ${where}:${frame.lineNumber + 1}`;
}

/** Sums a profile up as markdown; with the number of requests served, also µs per request. */
export function summarizeProfile(p: CpuProfile, requests: number | null = null, top = 25): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  p.samples.forEach((nodeId, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    const node = byId.get(nodeId)!;
    const key = label(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + dt);
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + dt);
    const seen = new Set<string>();
    for (let at: number | undefined = nodeId; at !== undefined; at = parent.get(at)) {
      const k = label(byId.get(at)!.callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
    }
  });
  const idle = areas.get('(idle)') ?? 0;
  const busy = total - idle;
  const rows = (m: Map<string, number>, n: number, skipPseudo: boolean): string =>
    [...m]
      .filter(([k]) => k !== '(idle)' && (!skipPseudo || !k.startsWith('(')))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(
        ([k, ms]) =>
          `| ${ms.toFixed(0).padStart(6)} | ${((ms / busy) * 100).toFixed(1).padStart(5)}% |${perRequest === null ? '' : ` ${(ms * perRequest).toFixed(2).padStart(6)} |`} ${k} |`,
      )
      .join('\n');
  const perRequest = requests === null || requests === 0 ? null : 1000 / requests;
  const head = perRequest === null ? '| ms | share |' : '| ms | share | µs/request |';
  const rule = perRequest === null ? '|---:|---:|---|' : '|---:|---:|---:|---|';
  return [
    `Profile: ${(total / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s busy, ${(idle / 1000).toFixed(1)} s idle${perRequest === null ? '' : `; ${requests} requests, ${(busy * perRequest).toFixed(1)} µs busy per request`}. Shares are of busy time.`,
    '',
    '**By area (self time)**',
    '',
    `${head} area |`,
    rule,
    rows(areas, 40, false),
    '',
    `**Top ${top} functions by self time**`,
    '',
    `${head} function |`,
    rule,
    rows(self, top, false),
    '',
    `**Top ${top} functions by inclusive time** (time with callees; V8 pseudo-frames left out)`,
    '',
    `${head} function |`,
    rule,
    rows(inclusive, top, true),
  ].join('\n');
}

async function main(): Promise<void> {
  if (id.endsWith('.cpuprofile')) {
    process.stdout.write(`${summarizeProfile(JSON.parse(readFileSync(id, 'utf8')) as CpuProfile)}\n`);
    return;
  }
  const core = cores(cpus().length);
  pinSelf(core.load);
  const work = mkdtempSync(join(tmpdir(), 'sis-profile-'));
  const data = mainDataset();
  const s = scenarios(data).find((x) => x.id === id);
  if (s === undefined)
    throw new Error(
      `unknown scenario ${id}; one of: ${scenarios(data)
        .map((x) => x.id)
        .join(', ')}`,
    );
  writeFileSync(join(work, 'main.json'), JSON.stringify(data));
  await importDataset(join(work, 'main.json'), join(work, 'main.sqlite'));
  const profDir = join(work, 'prof');
  const nodeFlags = ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
  const server = await startTarget({
    target,
    scenario: s,
    core: core.server,
    db: join(work, 'main.sqlite'),
    work,
    nodeFlags,
  });
  let load: LoadResult;
  try {
    await checkOnce(s, target, server.base);
    const spec: LoadSpec = {
      generator: chooseGenerator(process.env),
      url: `${server.base}${pathFor(s, target)}`,
      method: s.request.method,
      headers: s.request.headers,
      ...(s.request.body === undefined ? {} : { body: s.request.body }),
      connections,
      duration: seconds,
    };
    writeFileSync(join(work, 'spec.json'), JSON.stringify(spec));
    load = JSON.parse(
      await runChild(nodeCommand(core.load, [join(BENCH_DIST, 'load/worker.js'), join(work, 'spec.json')])),
    ) as LoadResult;
  } finally {
    // SIGTERM: each server stops gracefully and node writes the profile on exit.
    await server.child.stop();
  }
  // Only the profile is worth keeping.
  for (const f of readdirSync(work)) if (f !== 'prof') rmSync(join(work, f), { recursive: true, force: true });
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`no profile written in ${profDir}`);
  const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile;
  process.stdout.write(
    `${target}: scenario ${s.id} (${s.title}, ${s.binding}) for ${seconds} s at ${connections} connections, under --cpu-prof: ${Math.round(load.rps)} req/s, p99 ${load.p99.toFixed(2)} ms\n\n`,
  );
  // The profile also covers start-up and shutdown: a little more than the load itself.
  process.stdout.write(
    `${summarizeProfile(profile, load.responses)}\n\nProfile file: ${join(profDir, file)} (repository ${REPO_ROOT})\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`profile: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
