/**
 * AuthCode's latency while the pruner works through a large backlog, against the same load on the
 * same data with pruning off: `node dist/bench/prune-load.js` (after `npm run build`).
 *
 * For each store, twice: a database seeded with PRUNE_ROWS codes and PRUNE_ROWS failed messages
 * 40 days old (plus the service's own writes), `sis serve` started on it, and at once a bounded
 * AuthCode load (PRUNE_RATE requests/s over PRUNE_CONNECTIONS connections for PRUNE_SECONDS,
 * SOAP 1.1, autocannon). Once with retentions 0 (nothing pruned: the baseline), once with the
 * default 30 days (the whole backlog is due at start). /metrics is read every 250 ms to see when
 * the backlog is gone. Each response's latency is kept (autocannon's histogram rounds to whole ms).
 *
 * PRUNE_ROUNDS (default 1) repeats the pair, alternating. PostgreSQL runs when BENCH_POSTGRES_URL (or SIS_TEST_POSTGRES_URL) is set, in a schema of its own
 * that is dropped afterwards. Keep runs short on a shared machine: the defaults take about a minute.
 * On a busy machine, `BENCH_NICE=-10 setsid -w node dist/bench/prune-load.js` runs the server and
 * this process (the load) each in a scheduling group of its own at that priority, as `npm run bench` does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { openStore } from '../src/store/open/open-store.js';
import { CLI, cores, freePort, NICE, nodeCommand, pinSelf, startChild, waitUntilUp } from './load/processes.js';
import type { Child } from './load/processes.js';
import { percentile } from './report/stats.js';
import { AUTH_CODE_LIMITS_OFF } from './targets/servers.js';

const env = process.env;
const ROWS = Number(env['PRUNE_ROWS'] ?? 200_000);
const SECONDS = Number(env['PRUNE_SECONDS'] ?? 6);
const RATE = Number(env['PRUNE_RATE'] ?? 300);
const CONNECTIONS = Number(env['PRUNE_CONNECTIONS'] ?? 10);
/** Baseline and pruning runs alternate this many times per store (noise on a shared machine shows as their spread). */
const ROUNDS = Number(env['PRUNE_ROUNDS'] ?? 1);
const POSTGRES = env['BENCH_POSTGRES_URL'] ?? env['SIS_TEST_POSTGRES_URL'] ?? '';
/** The server on one core, this process (the load) on the other, when taskset is there. */
const CORES = cores(availableParallelism());
const LOAD_BEFORE = loadavg()[0]!.toFixed(1);
const OLD = new Date(Date.now() - 40 * 86_400_000).toISOString();

const BODY =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
  '<AuthCode xmlns="http://tempuri.org/"><code>123456</code><phone>+15551234567</phone></AuthCode></soap:Body></soap:Envelope>';

interface Run {
  readonly store: string;
  readonly pruning: boolean;
  readonly responses: number;
  readonly failed: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Seconds from the start of the load until the backlog was gone; null: not within the run. */
  readonly prunedAfter: number | null;
  readonly pruned: number;
}

/** A fresh, migrated database with the backlog; returns its URL and how to drop it. */
async function seeded(
  store: 'SQLite' | 'PostgreSQL',
  dir: string,
  n: number,
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (store === 'SQLite') {
    const file = join(dir, `prune-${n}.db`);
    await (await openStore(`sqlite:${file}`)).close();
    const db = new DatabaseSync(file);
    const series = `with recursive s(i) as (select 1 union all select i + 1 from s where i < ${ROWS})`;
    db.exec(
      `${series} insert into auth_codes (code, phone, created_at) select 'old-' || i, '+1555' || printf('%07d', i), '${OLD}' from s`,
    );
    db.exec(
      `${series} insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at) select '+1555' || printf('%07d', i), 'old-' || i, 'Your code is old-' || i, 'failed', 8, '${OLD}', '${OLD}' from s`,
    );
    db.close();
    return { url: `sqlite:${file}`, drop: async () => undefined };
  }
  const schema = `sis_bench_prune_${process.pid}_${n}`;
  const url = `${POSTGRES}${POSTGRES.includes('?') ? '&' : '?'}schema=${schema}`;
  await (await openStore(url)).close();
  const client = new pg.Client({ connectionString: POSTGRES });
  await client.connect();
  await client.query(`set search_path to "${schema}"`);
  await client.query(
    `insert into auth_codes (code, phone, created_at) select 'old-' || i, '+1555' || lpad(i::text, 7, '0'), $1 from generate_series(1, ${ROWS}) as s(i)`,
    [OLD],
  );
  await client.query(
    `insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at) select '+1555' || lpad(i::text, 7, '0'), 'old-' || i, 'Your code is old-' || i, 'failed', 8, $1, $1 from generate_series(1, ${ROWS}) as s(i)`,
    [OLD],
  );
  await client.query('analyze auth_codes; analyze outbox');
  await client.end();
  return {
    url,
    async drop() {
      const admin = new pg.Client({ connectionString: POSTGRES });
      await admin.connect();
      await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    },
  };
}

async function serve(url: string, pruning: boolean): Promise<{ child: Child; base: string }> {
  const retention = pruning ? {} : { SIS_AUTH_CODE_RETENTION_MS: '0', SIS_OUTBOX_RETENTION_MS: '0' };
  const port = await freePort();
  const child = startChild('sis serve', nodeCommand(CORES.server, [CLI, 'serve']), {
    ...env,
    SIS_DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    SIS_DEMO_DATA: 'false',
    LOG_LEVEL: 'silent',
    ...AUTH_CODE_LIMITS_OFF,
    ...retention,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${base}/healthz`);
  return { child, base };
}

async function prunedSoFar(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(/^sis_retention_pruned_rows_total\{table="[a-z_]+"\} (\d+)$/gm)) sum += Number(m[1]);
  return sum;
}

type Tracker = PromiseLike<{ errors: number; timeouts: number; non2xx: number }> & {
  on(event: 'response', f: (c: unknown, status: number, bytes: number, ms: number) => void): void;
};

async function load(store: string, pruning: boolean, base: string): Promise<Run> {
  const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Tracker;
  const latencies: number[] = [];
  const started = Date.now();
  let prunedAfter: number | null = null;
  let pruned = 0;
  const watch = setInterval(() => {
    void prunedSoFar(base).then((n) => {
      pruned = n;
      if (prunedAfter === null && n >= 2 * ROWS) prunedAfter = (Date.now() - started) / 1000;
    });
  }, 250);
  const tracker = autocannon({
    url: `${base}/AuthCodeSending.asmx`,
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://tempuri.org/AuthCode"' },
    body: BODY,
    connections: CONNECTIONS,
    overallRate: RATE,
    duration: SECONDS,
  });
  tracker.on('response', (_c, status, _b, ms) => void (status === 200 && latencies.push(ms)));
  const result = await tracker;
  clearInterval(watch);
  pruned = await prunedSoFar(base);
  const sorted = Float64Array.from(latencies).sort();
  return {
    store,
    pruning,
    responses: sorted.length,
    failed: result.errors + result.timeouts + result.non2xx,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    prunedAfter,
    pruned,
  };
}

async function main(): Promise<void> {
  pinSelf(CORES.load);
  if (NICE !== null) {
    // The load generator's own scheduling group (run it under `setsid`), as bench/load/processes.ts does for the server.
    try {
      writeFileSync('/proc/self/autogroup', NICE);
    } catch {
      // Not allowed, or no autogroups: normal priority.
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'sis-prune-bench-'));
  const runs: Run[] = [];
  const stores = POSTGRES === '' ? (['SQLite'] as const) : (['SQLite', 'PostgreSQL'] as const);
  let n = 0;
  try {
    for (const store of stores) {
      for (const pruning of Array.from({ length: ROUNDS }, () => [false, true]).flat()) {
        const db = await seeded(store, dir, ++n);
        const { child, base } = await serve(db.url, pruning);
        try {
          runs.push(await load(store, pruning, base));
        } finally {
          await child.stop();
          await db.drop();
        }
        const r = runs.at(-1)!;
        process.stderr.write(
          `${store} ${pruning ? 'pruning' : 'baseline'}: p99 ${r.p99.toFixed(2)} ms, pruned ${r.pruned}\n`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (ms: number): string => ms.toFixed(2);
  process.stdout.write(
    `Backlog: ${ROWS} codes and ${ROWS} failed messages, 40 days old. Load: AuthCode over SOAP 1.1, ${RATE} requests/s, ${CONNECTIONS} connections, ${SECONDS} s. Load average before: ${LOAD_BEFORE}, after: ${loadavg()[0]!.toFixed(1)}.\n\n` +
      '| Store | Pruning | Responses | Failed | p50 ms | p99 ms | max ms | Backlog gone after |\n|---|---|--:|--:|--:|--:|--:|--:|\n' +
      runs
        .map(
          (r) =>
            `| ${r.store} | ${r.pruning ? 'on (30 days)' : 'off (retention 0)'} | ${r.responses} | ${r.failed} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} | ${
              r.pruning
                ? r.prunedAfter === null
                  ? `not within the run (${r.pruned} pruned)`
                  : `${r.prunedAfter.toFixed(1)} s`
                : '–'
            } |`,
        )
        .join('\n') +
      '\n',
  );
}

await main();
