/**
 * `npm run soak -- --minutes 60`: what holds when the service runs for a long time through the
 * faults production brings. Not part of `npm test` (it takes as long as it is told, and needs root,
 * PostgreSQL's server binaries, redis-server and haproxy).
 *
 * Two instances of the built service (each as `npm start` runs it) on a private PostgreSQL
 * primary with a streaming standby, reached through a TCP proxy (the database's address), and on
 * a private Redis, behind HAProxy with the repository's configuration; a counting SMS gateway
 * stand-in. An open-loop load over the four bindings (reads, and AuthCodes each to a phone of its
 * own) runs the whole time, while a cycle of events repeats until the time is up: an instance
 * restarted, a 30 s database partition, a 30 s Redis loss (killed, an empty one started), a
 * `sis import`, a switchover (primary stopped, standby promoted, the proxy moved to it seconds
 * later, the old primary back as the new one's standby), the other instance restarted.
 *
 * At the end it prints what held: requests by outcome, failures by kind and the phase they
 * started in, answer times, AuthCodes delivered once / more than once / never, each instance's
 * RSS at start, peak and end, the stale answers served, each event's duration. It stops by itself
 * (a watchdog ends it 10 minutes past its time) and removes everything it started, on Ctrl-C too.
 *
 * Options: --minutes N (5), --reads N per second (40), --codes N per second (2), --gap S seconds
 * between events (20), --fault S seconds a partition or Redis loss lasts (30), --move S seconds
 * between the promotion and the address move (5). Instances get NODE_OPTIONS and SIS_* settings
 * from the environment (SOAK_NODE_OPTIONS overrides NODE_OPTIONS for them only); the node running
 * this script runs them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CLI, REPO_ROOT } from './load/processes.js';
import { percentile } from './report/stats.js';
import { haproxyPath, startBalancer } from './soak/haproxy.js';
import type { SoakBalancer } from './soak/haproxy.js';
import { Instance } from './soak/instances.js';
import { PostgresPair, postgresPairMissing } from './soak/postgres-pair.js';
import { PrivateRedis, redisMissing } from './soak/redis.js';
import { startCountingGateway } from './soak/sms-gateway.js';
import type { CountingGateway } from './soak/sms-gateway.js';
import { SoakProxy } from './soak/tcp-proxy.js';
import { Traffic } from './soak/traffic.js';
import { AUTH_CODE_LIMITS_OFF } from './targets/servers.js';

const run = promisify(execFile);

function options(argv: readonly string[]): Record<'minutes' | 'reads' | 'codes' | 'gap' | 'fault' | 'move', number> {
  const o = { minutes: 5, reads: 40, codes: 2, gap: 20, fault: 30, move: 5 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]!.replace(/^--/, '');
    const value = Number(argv[i + 1]);
    if (!(name in o) || !Number.isFinite(value) || value < 0)
      throw new Error(
        `usage: npm run soak -- [--minutes N] [--reads N] [--codes N] [--gap S] [--fault S] [--move S] (${argv[i]} ${argv[i + 1]})`,
      );
    o[name as keyof typeof o] = value;
  }
  return o;
}

const DEVICES = 20_000;
const SCHOOLS = 20;
const mb = (bytes: number): string => (bytes / 1e6).toFixed(0);
const clock = (ms: number): string =>
  `${Math.floor(ms / 60_000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}`;
const say = (line: string): void => void process.stdout.write(`${line}\n`);

interface EventRecord {
  readonly at: number;
  readonly name: string;
  seconds: number;
  note: string;
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const missing = [
    postgresPairMissing(),
    redisMissing(),
    haproxyPath() === null ? 'haproxy not on PATH (Debian’s haproxy package)' : null,
  ].filter((m) => m !== null);
  if (missing.length > 0) throw new Error(`cannot soak here: ${missing.join('; ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'sis-soak-'));
  // Everything started is stopped on the way out, however it comes (the end, an error, Ctrl-C, the watchdog).
  const cleanups: (() => void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  const cleanup = (): void => {
    for (const c of cleanups.splice(0).reverse())
      try {
        c();
      } catch {
        // the rest still runs
      }
  };
  process.once('exit', cleanup);
  const watchdog = setTimeout(
    () => {
      process.stderr.write('soak: still running 10 minutes past its time: stopping\n');
      process.exit(2);
    },
    (o.minutes + 10) * 60_000,
  );
  watchdog.unref();

  say(
    `Soak of ${o.minutes} min: Node ${process.version}; ${o.reads} reads/s and ${o.codes} AuthCodes/s over four bindings`,
  );
  say(
    `load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; work dir ${dir}`,
  );
  const pair = await PostgresPair.start('sis');
  cleanups.push(() => pair.remove());
  const redis = await PrivateRedis.start();
  cleanups.push(() => void redis.lose());
  const proxy = new SoakProxy(pair.primaryPort);
  await proxy.start();
  cleanups.push(() => void proxy.close());
  const gateway: CountingGateway = await startCountingGateway();
  cleanups.push(() => void gateway.close());
  const databaseUrl = `postgres://postgres@127.0.0.1:${proxy.port}/sis`;

  // The data: 20,000 students in 20 schools of 1,000, 20,000 devices (scripts/generate-dataset.js).
  await run(process.execPath, [
    join(REPO_ROOT, 'scripts/generate-dataset.js'),
    ...['--students', String(DEVICES), '--devices', String(DEVICES), '--schools', String(SCHOOLS), '--out', dir],
  ]);
  const dataset = join(dir, 'dataset.json');
  const cliEnv = { ...process.env, SIS_DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  await run(process.execPath, [CLI, 'import', dataset], { env: cliEnv });

  const nodeOptions = process.env['SOAK_NODE_OPTIONS'] ?? process.env['NODE_OPTIONS'];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...(nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions }),
    ...AUTH_CODE_LIMITS_OFF,
    SIS_DATABASE_URL: databaseUrl,
    SIS_REDIS_URL: redis.url,
    SIS_DEMO_DATA: 'false',
    SIS_LOG_FORMAT: 'json',
    SIS_TRUSTED_PROXIES: '127.0.0.1',
    SIS_RATE_LIMIT: '1000000/1s',
    SIS_AUTH_CODES_PER_IPV6_48_HOUR: '0',
    SIS_SMS_HOURLY_BUDGET: '1000000',
    SIS_SMS_DAILY_BUDGET: '1000000',
    SIS_SMS_DEFAULT_REGION: 'SA',
    SIS_SMS_WEBHOOK_URL: gateway.url,
    SIS_SMS_WEBHOOK_SECRET: 'soak-secret-of-thirty-two-bytes-or-more',
  };
  const instances: Instance[] = [];
  cleanups.push(() => instances.forEach((i) => void i.stop()));
  instances.push(await Instance.create('sis-1', dir, env), await Instance.create('sis-2', dir, env));
  const [one, two] = instances as [Instance, Instance];
  const balancer: SoakBalancer = await startBalancer(dir, { 'sis-1': one.address, 'sis-2': two.address });
  cleanups.push(() => balancer.stop());
  const until = Date.now() + 30_000;
  while (
    !(await fetch(`${balancer.url}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > until) throw new Error('HAProxy had no instance in rotation within 30 s');
    await sleep(200);
  }

  let phase = 'before any event';
  const traffic = new Traffic({
    url: balancer.url,
    readsPerSecond: o.reads,
    codesPerSecond: o.codes,
    devices: DEVICES,
    schools: SCHOOLS,
    phase: () => phase,
  });
  const started = Date.now();
  const end = started + o.minutes * 60_000;
  traffic.start();

  const events: { name: string; seconds: number; run: () => Promise<string> }[] = [
    { name: 'restart sis-1', seconds: 15, run: async () => (await one.restart(), '') },
    {
      name: 'database partition',
      seconds: o.fault,
      run: async () => (proxy.pause(), await sleep(o.fault * 1000), proxy.resume(), ''),
    },
    {
      name: 'Redis loss',
      seconds: o.fault,
      run: async () => (await redis.lose(), await sleep(o.fault * 1000), await redis.restore(), ''),
    },
    {
      name: 'sis import',
      seconds: 30,
      run: async () => {
        const result = await run(process.execPath, [CLI, 'import', dataset], { env: cliEnv, timeout: 600_000 }).then(
          () => 'exit 0',
          (e: Error & { code?: unknown; stderr?: string }) =>
            `failed (${String(e.code)}): ${String(e.stderr ?? e.message)
              .trim()
              .split('\n')
              .at(-1)}`,
        );
        return result;
      },
    },
    {
      name: 'switchover',
      seconds: o.move + 15,
      run: async () => {
        await pair.stopPrimary();
        const port = await pair.promote();
        await sleep(o.move * 1000);
        proxy.moveTo(port);
        await pair.rejoin();
        await sleep(3000);
        return `address moved ${o.move} s after the promotion; old primary streaming from the new: ${(await pair.streaming()) ? 'yes' : 'no'}`;
      },
    },
    { name: 'restart sis-2', seconds: 15, run: async () => (await two.restart(), '') },
  ];
  const done: EventRecord[] = [];
  for (let i = 0; ; i++) {
    const event = events[i % events.length]!;
    if (Date.now() + (o.gap + event.seconds) * 1000 > end) break;
    await sleep(o.gap * 1000);
    const record: EventRecord = { at: Date.now() - started, name: event.name, seconds: 0, note: '' };
    phase = `during ${event.name}`;
    say(`${clock(record.at)} ${event.name}`);
    try {
      record.note = await event.run();
    } catch (error) {
      record.note = `FAILED: ${error instanceof Error ? error.message : String(error)}`;
    }
    record.seconds = (Date.now() - started - record.at) / 1000;
    phase = `after ${event.name}`;
    done.push(record);
  }
  await sleep(Math.max(0, end - Date.now()));
  phase = 'at the end';
  await traffic.stop();
  const delivered = await waitForDelivery(gateway, traffic.tally.accepted);
  for (const i of instances) await i.finish();
  report(o.minutes, traffic, gateway, instances, done, delivered);
  say(
    `load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const i of instances) await i.stop();
  cleanup();
}

/** Waits (up to 60 s) until every accepted code was delivered, then 5 s for late duplicates; the seconds it waited. */
async function waitForDelivery(gateway: CountingGateway, accepted: readonly string[]): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < 60_000 && accepted.some((p) => !gateway.perPhone.has(p))) await sleep(500);
  await sleep(5000);
  return (Date.now() - t0) / 1000;
}

function report(
  minutes: number,
  traffic: Traffic,
  gateway: CountingGateway,
  instances: readonly Instance[],
  events: readonly EventRecord[],
  deliverySeconds: number,
): void {
  const { tally } = traffic;
  say(`\n== What held over ${minutes} min`);
  say('Events (start, seconds it took, note):');
  for (const e of events)
    say(`  ${clock(e.at)} ${e.name}: ${e.seconds.toFixed(1)} s${e.note === '' ? '' : `; ${e.note}`}`);
  const total = [...tally.outcomes.values()].reduce((a, b) => a + b, 0);
  say(
    `Requests by outcome (${total} in all${tally.skipped > 0 ? `; ${tally.skipped} not sent: 1,000 were waiting` : ''}):`,
  );
  for (const [key, n] of [...tally.outcomes].sort()) say(`  ${key}: ${n}`);
  say('Failures by kind (request, outcome, the phase it started in):');
  if (tally.failures.size === 0) say('  none');
  for (const [key, n] of [...tally.failures].sort()) say(`  ${key}: ${n}`);
  say('Answer times (ms, every outcome):');
  for (const [kind, times] of tally.times) {
    const sorted = [...times].sort((a, b) => a - b);
    say(`  ${kind}: p50 ${percentile(sorted, 50)}, p99 ${percentile(sorted, 99)}, max ${sorted.at(-1)}`);
  }
  const counts = tally.accepted.map((p) => gateway.perPhone.get(p) ?? 0);
  const refusedButSent = tally.notAccepted.filter((p) => gateway.perPhone.has(p)).length;
  say(
    `AuthCodes: ${tally.accepted.length + tally.notAccepted.length} asked, ${tally.accepted.length} answered 200: ` +
      `delivered once ${counts.filter((c) => c === 1).length}, more than once ${counts.filter((c) => c > 1).length}, ` +
      `never ${counts.filter((c) => c === 0).length} (waited ${deliverySeconds.toFixed(0)} s at the end); ` +
      `${tally.notAccepted.length} not answered 200, of which delivered anyway ${refusedButSent}; gateway received ${gateway.total()} messages`,
  );
  say('Memory (RSS, MB: 5 s after the first start, the peak, at the end):');
  for (const i of instances)
    say(`  ${i.name}: ${mb(i.memory.start)} / ${mb(i.memory.peak)} / ${mb(i.memory.end)} (${i.restarts} restart(s))`);
  say(`Stale answers served: ${instances.map((i) => `${i.name} ${i.staleServed}`).join(', ')}`);
  say(`Error lines logged: ${instances.map((i) => `${i.name} ${i.errorLines()}`).join(', ')}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
