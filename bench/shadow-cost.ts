/**
 * What running beside the legacy service costs ours (docs/migrating.md, "What it costs"): the
 * same load (GetTokenDevice over SOAP 1.1 and GetStudentSchool over HTTP GET, demo data) against
 * ours with SIS_SHADOW=off, then compare with SAMPLE=1 beside a fast legacy (the ceiling server
 * answering the bytes ours answers, so every comparison is identical and the legacy's own CPU is
 * as small as it can be), one that hangs, and one that refuses; rounds alternate. Reported: requests per second, and our process's CPU time per request (what the
 * comparisons cost whatever else runs on the machine). `node dist/bench/shadow-cost.js`;
 * BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (20), BENCH_CPU_PROF_DIR (a CPU profile per run).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSecondsOf, mainThreadCpuSecondsOf } from './load/proc-stat.js';
import { BENCH_DIST, CLI, freePort, nodeCommand, startChild, waitUntilUp } from './load/processes.js';
import type { Child } from './load/processes.js';
import { soapRequest } from './scenarios/soap-requests.js';

/** autocannon ships no types: the part used here. */
type Autocannon = (opts: Record<string, unknown>) => Promise<{ requests: { average: number; total: number } }>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const seconds = Number(process.env['BENCH_SECONDS'] ?? 5);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 3);
const connections = Number(process.env['BENCH_CONNECTIONS'] ?? 20);
const profileDir = process.env['BENCH_CPU_PROF_DIR'] ?? '';
const dir = mkdtempSync(join(tmpdir(), 'sis-shadow-bench-'));
const database = `sqlite:${join(dir, 'sis.db')}`;
const ANSWERS = join(dir, 'legacy-answers.json');

async function serve(name: string, env: Record<string, string>): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  // BENCH_CPU_PROF_DIR: a CPU profile of each run's server, named by its label (bench/profile.ts sums one up).
  const profile =
    profileDir === ''
      ? []
      : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name.replace(/\W+/g, '-')}.cpuprofile`];
  const child = startChild(name, nodeCommand(null, [...profile, CLI, 'serve']), {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SIS_DATABASE_URL: database,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${url}/healthz`);
  return { child, url };
}

async function hangingPort(): Promise<number> {
  const server = createServer(() => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.unref();
  return (server.address() as AddressInfo).port;
}

const SOAP_BODY = soapRequest('http://schemas.xmlsoap.org/soap/envelope/', 'soap', 'GetTokenDevice', [['id', '1']]);
const REQUESTS: readonly { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
  {
    method: 'POST',
    path: '/PushNotificationMobile.asmx',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/GetTokenDevice"' },
    body: SOAP_BODY,
  },
  {
    method: 'GET',
    path: '/NotificationNotes.asmx/GetStudentSchool?school_base_url=http%3A%2F%2Fschool-a.example&show_active=1',
  },
];

async function load(url: string): Promise<{ rps: number; requests: number }> {
  const result = await autocannon({ url, connections, duration: seconds, requests: REQUESTS });
  return { rps: result.requests.average, requests: result.requests.total };
}

/** The comparisons' results so far, summed over labels (`skipped` shows what the in-flight cap left out). */
async function comparisonResults(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sums = new Map<string, number>();
  for (const m of text.matchAll(/^sis_shadow_comparisons_total\{[^}]*result="([^"]+)"[^}]*\} (\d+)/gm))
    sums.set(m[1]!, (sums.get(m[1]!) ?? 0) + Number(m[2]));
  return sums.size === 0 ? '' : `\t${[...sums].map(([k, v]) => `${k} ${v}`).join(', ')}`;
}

/** The mirror server's own tally of its comparisons. */
async function mirrorResults(url: string): Promise<string> {
  const tally = (await (await fetch(`${url}/tally`)).json()) as Record<string, number>;
  return `\t${Object.entries(tally)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}`;
}

type Start = () => Promise<{ child: Child; url: string }>;

async function measure(label: string, start: Start, results = comparisonResults): Promise<string> {
  const ours = await start();
  try {
    await load(ours.url); // warm-up
    const pid = ours.child.pid;
    const cpu0 = cpuSecondsOf(pid);
    const main0 = mainThreadCpuSecondsOf(pid);
    const { rps, requests } = await load(ours.url);
    const cpuUs = ((cpuSecondsOf(pid) - cpu0) * 1e6) / requests;
    const mainUs = ((mainThreadCpuSecondsOf(pid) - main0) * 1e6) / requests;
    const compared = await results(ours.url);
    return `${label}\t${rps.toFixed(0)} req/s\t${cpuUs.toFixed(0)} µs CPU/request (main thread ${mainUs.toFixed(0)})${compared}`;
  } finally {
    await ours.child.stop();
  }
}

/** The fast legacy: the ceiling server with our own answers to the two requests, byte for byte. */
async function fastLegacy(): Promise<{ child: Child; url: string }> {
  const source = await serve('answers', { SIS_DEMO_DATA: 'true' });
  const answers: Record<string, { status: number; contentType: string; body: string }> = {};
  try {
    for (const r of REQUESTS) {
      const res = await fetch(`${source.url}${r.path}`, {
        method: r.method,
        headers: r.headers ?? {},
        body: r.body ?? null,
      });
      answers[r.path] = {
        status: res.status,
        contentType: res.headers.get('content-type') ?? '',
        body: await res.text(),
      };
    }
  } finally {
    await source.child.stop();
  }
  writeFileSync(ANSWERS, JSON.stringify(answers));
  return fixedAnswers('legacy', 'ceiling-server.js');
}

/** Our answers, byte for byte, from a bench server (`script`): the legacy, or the mirror server. */
async function fixedAnswers(
  name: string,
  script: string,
  env: Record<string, string> = {},
): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = startChild(name, nodeCommand(null, [join(BENCH_DIST, 'targets', script), ANSWERS]), {
    ...process.env,
    ...env,
    PORT: String(port),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${url}${REQUESTS[0]!.path}`);
  return { child, url };
}

const legacy = await fastLegacy();
const hang = await hangingPort();
const refused = await freePort();
const shadow = { SIS_SHADOW: 'compare', SIS_SHADOW_SAMPLE: '1' };
const configs: [string, Start, typeof comparisonResults?][] = [
  ['off', () => serve('off', {})],
  ['compare, fast legacy', () => serve('compare', { ...shadow, SIS_LEGACY_URL: `${legacy.url}/` })],
  // The default in-flight cap skips what waits beyond it: here every request is compared.
  [
    'compare, fast legacy, no cap',
    () => serve('no cap', { ...shadow, SIS_LEGACY_URL: `${legacy.url}/`, SIS_SHADOW_MAX_IN_FLIGHT: '100000' }),
  ],
  [
    'compare, hanging legacy',
    () => serve('hanging', { ...shadow, SIS_LEGACY_URL: `http://127.0.0.1:${hang}/`, SIS_SHADOW_TIMEOUT_MS: '1000' }),
  ],
  ['compare, refusing legacy', () => serve('refusing', { ...shadow, SIS_LEGACY_URL: `http://127.0.0.1:${refused}/` })],
  // The least compare mode can cost (bench/targets/mirror-server.ts): fixed answers, alone, then each request mirrored.
  ['necessary: fixed answers', () => fixedAnswers('mirror off', 'mirror-server.js'), mirrorResults],
  [
    'necessary: fixed answers + mirror',
    () => fixedAnswers('mirror', 'mirror-server.js', { MIRROR_URL: legacy.url }),
    mirrorResults,
  ],
];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const [label, start, results] of configs)
      console.log(`round ${round}\t${await measure(label, start, results)}`);
  }
} finally {
  await legacy.child.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
