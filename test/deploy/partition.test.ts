/**
 * A real partition end to end (issue 40): a TCP proxy the test controls in front of PostgreSQL and
 * one in front of a private Redis stop forwarding (connections kept, new ones accepted, nothing
 * answered), under two instances behind HAProxy with the repository's configuration and a mixed
 * load over the four bindings: the database partitioned, then Redis, then both. Every read is
 * answered well before the balancer's server time-out (10 s, the issue's), AuthCode within its
 * deadline with 200 or the documented fault, each code answered 200 sent exactly once and each
 * answered with the fault never; both instances recover when the network does, each saying it in
 * one line when a dependency is lost and one when it is back; a read with a stale answer within
 * half a second (p99), the partition's first second included (issue 45: SIS_STALE_AFTER_MS, the
 * rate limit's Redis and the database never waited for one after the other). The figures (read
 * times during each partition and in its first second, AuthCode's, recovery) are printed as
 * diagnostics.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { findExecutable } from '../clients/client-scenario.js';
import { BINDINGS, requestOf, school, token } from '../helpers/binding-requests.js';
import type { Binding, Call } from '../helpers/binding-requests.js';
import { eventually } from '../helpers/eventually.js';
import { HAPROXY_SKIP, startHaproxy } from '../helpers/haproxy.js';
import type { Balancer } from '../helpers/haproxy.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startServe, stopServe } from '../helpers/serve-process.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { saudiMobiles } from '../helpers/sms-calls.js';
import { closedPort, startSmsGateway } from '../helpers/sms-gateway.js';
import type { SmsGateway } from '../helpers/sms-gateway.js';
import { POSTGRES_SKIP, cleanupTargets, newSchema, postgresUrl } from '../helpers/store-targets.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const REDIS_SERVER = findExecutable('redis-server');
const SKIP =
  HAPROXY_SKIP ||
  (POSTGRES_SKIP ?? false) ||
  (REDIS_SERVER === null ? 'redis-server not found: install Debian’s redis-server package' : false);
/** The issue asks for 30 s; SIS_TEST_PARTITION_MS shortens it while working on the test (and SIS_TEST_PARTITIONS picks them). */
const PARTITION_MS = Number(process.env['SIS_TEST_PARTITION_MS'] ?? 30_000);
/** The balancer's server time-out the issue names: a read answered later is cut by it. */
const BALANCER_TIMEOUT_MS = 10_000;
/** Requests sent per second, over both instances. */
const RATE = 20;
/** A read with a stale answer, from the partition's first moment (issue 45): p99 within this. */
const STALE_P99_MS = 500;
const SECRET = 'partition-test-secret-of-32-bytes-or-more';

after(cleanupTargets);

type Kind = 'read-known' | 'read-new' | 'authcode';

/** Reads asked before every partition, at each instance and binding: they have stale answers. */
const KNOWN: readonly Call[] = [
  token('p1'),
  token('p2'),
  token('p3'),
  school('http://p1.example'),
  school('http://p2.example'),
];

interface Outcome {
  readonly kind: Kind;
  readonly binding: Binding;
  readonly status: number;
  readonly ms: number;
  /** When it was sent, from the load's start (ms). */
  readonly sentMs: number;
  readonly phone?: string;
}

/** Sends one request within `limitMs`; status 0 when it is not answered by then. */
async function send(
  url: string,
  binding: Binding,
  call: Call,
  limitMs: number,
): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const status = await rawRequest(url, requestOf(binding, call), { timeoutMs: limitMs, chunked: true }).then(
    (res) => res.status,
    () => 0,
  );
  return { status, ms: Date.now() - started };
}

/** A mixed open-loop load at RATE per second for `ms`: known and new reads, AuthCodes, each binding in turn. */
async function load(url: string, ms: number, phones: string[], outcomes: Outcome[]): Promise<void> {
  const pending: Promise<void>[] = [];
  const start = Date.now();
  const end = start + ms;
  for (let i = 0; Date.now() < end; i++) {
    const binding = BINDINGS[i % 4]!;
    const pick = i % 5;
    const kind: Kind = pick < 2 ? 'read-known' : pick < 4 ? 'read-new' : 'authcode';
    const phone = kind === 'authcode' ? phones.pop() : undefined;
    if (kind === 'authcode' && phone === undefined) throw new Error('out of phone numbers: raise their count');
    const call =
      kind === 'read-known'
        ? KNOWN[i % KNOWN.length]!
        : kind === 'read-new'
          ? i % 2 === 0
            ? token(`n${i}-${Date.now()}`)
            : school(`http://n${i}-${Date.now()}.example`)
          : { service: 'AuthCodeSending', op: 'AuthCode', args: { code: String(100_000 + i), phone: `+966${phone}` } };
    const sentMs = Date.now() - start;
    pending.push(
      send(url, binding, call, BALANCER_TIMEOUT_MS * 3).then(({ status, ms: took }) => {
        outcomes.push({
          kind,
          binding,
          status,
          ms: took,
          sentMs,
          ...(phone === undefined ? {} : { phone: `+966${phone}` }),
        });
      }),
    );
    await sleep(1000 / RATE);
  }
  await Promise.all(pending);
}

function quantile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

function quantiles(values: number[]): string {
  if (values.length === 0) return 'none';
  return `n=${values.length} p50=${quantile(values, 0.5)} ms p99=${quantile(values, 0.99)} ms max=${Math.max(...values)} ms`;
}

/** The state lines an instance logged about `dependency` since line `from`. */
function stateLines(s: ServeProcess, dependency: string, from: number): { lost: string[]; back: string[] } {
  const mine = s.logs.slice(from).filter((l) => l['dependency'] === dependency);
  const msgs = mine.map((l) => String(l['msg']));
  return {
    lost: msgs.filter((m) => !m.includes(' back to normal after ')),
    back: msgs.filter((m) => m.includes(' back to normal after ')),
  };
}

async function startRedis(): Promise<{ port: number; process: ChildProcess }> {
  const port = await closedPort();
  const child = spawn(
    REDIS_SERVER!,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  await eventually(
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end('PING\r\n'));
        socket.once('data', (d: Buffer) =>
          d.toString().startsWith('+PONG') ? resolve() : reject(new Error(d.toString())),
        );
        socket.once('error', reject);
      }),
    15_000,
  );
  return { port, process: child };
}

describe('a partition under load, behind HAProxy', { skip: SKIP, timeout: 600_000 }, () => {
  it('answers every read in time, AuthCode exactly once, and recovers, for the database, Redis and both', async (t: TestContext) => {
    const redis = await startRedis();
    const target = new URL(postgresUrl);
    const dbProxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const redisProxy = new TcpProxy('127.0.0.1', redis.port);
    await dbProxy.start();
    await redisProxy.start();
    const gateway: SmsGateway = await startSmsGateway(SECRET);
    const via = new URL(newSchema('partition').url);
    via.host = `127.0.0.1:${dbProxy.port}`;
    const env = {
      SIS_REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
      SIS_RATE_LIMIT: '100000/1s',
      // AuthCode's address counter, counted in Redis (HAProxy, the trusted proxy, gives the address).
      SIS_AUTH_CODES_PER_ADDRESS_HOUR: '1000000',
      SIS_TRUSTED_PROXIES: '127.0.0.1',
      SIS_SMS_DEFAULT_REGION: 'SA',
      SIS_SMS_WEBHOOK_URL: gateway.url,
      SIS_SMS_WEBHOOK_SECRET: SECRET,
      SIS_OUTBOX_POLL_MS: '200',
      SIS_STALE_IF_ERROR_MS: String(PARTITION_MS * 4),
      SIS_SHUTDOWN_GRACE_MS: '0',
    };
    const instances: ServeProcess[] = [];
    let balancer: Balancer | null = null;
    try {
      instances.push(await startServe(via.toString(), env));
      instances.push(await startServe(via.toString(), env));
      balancer = await startHaproxy({
        'sis-1': new URL(instances[0]!.url).host,
        'sis-2': new URL(instances[1]!.url).host,
      });
      const lb = balancer.url;
      await eventually(async () => assert.equal((await send(lb, 'httpget', token('p1'), 5000)).status, 200), 30_000);
      const phones = saudiMobiles(Math.ceil((RATE * PARTITION_MS * 3) / 1000 / 5) + 400, 40, '+9665000');
      const outcomes: Outcome[] = [];
      const calm = async (): Promise<void> => {
        // Each known read answered at each instance over each binding: each has its stale answer.
        for (const s of instances)
          for (const binding of BINDINGS)
            for (const call of KNOWN) assert.equal((await send(s.url, binding, call, 10_000)).status, 200);
        await load(lb, 2000, phones, outcomes);
      };
      await calm();

      const partitions: { name: string; proxies: TcpProxy[]; dependencies: string[] }[] = [
        { name: 'database', proxies: [dbProxy], dependencies: ['database'] },
        { name: 'Redis', proxies: [redisProxy], dependencies: ['Redis'] },
        { name: 'both', proxies: [dbProxy, redisProxy], dependencies: ['database', 'Redis'] },
      ];
      // SIS_TEST_PARTITIONS=Redis runs only that one (the database's holds once every call has a deadline).
      const chosen = process.env['SIS_TEST_PARTITIONS']?.split(',');
      for (const { name, proxies, dependencies } of partitions.filter((p) => chosen?.includes(p.name) ?? true)) {
        const from = instances.map((s) => s.logs.length);
        const during: Outcome[] = [];
        for (const p of proxies) p.pause();
        await load(lb, PARTITION_MS, phones, during);
        for (const p of proxies) p.resume();
        const resumed = Date.now();
        // Recovered: a read never asked before is answered 200 by each instance (it needs the database),
        // and each says every dependency is back. Measured, then asserted below the figures.
        const recovered = (check: () => Promise<void> | void): Promise<string> =>
          eventually(check, 30_000).then(
            () => `${Date.now() - resumed} ms`,
            () => 'not within 30 s',
          );
        const readsBack = await recovered(async () => {
          for (const s of instances)
            assert.equal((await send(s.url, 'httpget', token(`r${Date.now()}`), 5000)).status, 200);
        });
        const linesBack = await recovered(() => {
          for (const [i, s] of instances.entries())
            for (const d of dependencies) assert.equal(stateLines(s, d, from[i]!).back.length, 1, `${d} back`);
        });
        outcomes.push(...during);

        const reads = during.filter((o) => o.kind !== 'authcode');
        const codes = during.filter((o) => o.kind === 'authcode');
        const known = reads.filter((o) => o.kind === 'read-known');
        const firstSecond = known.filter((o) => o.sentMs < 1000);
        t.diagnostic(`${name} partitioned ${PARTITION_MS / 1000} s, ${during.length} requests`);
        t.diagnostic(`  reads with a stale answer: ${quantiles(known.map((o) => o.ms))}`);
        t.diagnostic(`  in its first second: ${quantiles(firstSecond.map((o) => o.ms))}`);
        t.diagnostic(`  reads without: ${quantiles(reads.filter((o) => o.kind === 'read-new').map((o) => o.ms))}`);
        t.diagnostic(
          `  AuthCode: ${quantiles(codes.map((o) => o.ms))}; 200: ${codes.filter((o) => o.status === 200).length}, fault: ${codes.filter((o) => o.status === 500).length}`,
        );
        t.diagnostic(`  statuses: ${JSON.stringify(countBy(during.map((o) => `${o.kind} ${o.status}`)))}`);
        t.diagnostic(
          `  recovery: new reads answered ${readsBack} after the network, every back line ${linesBack} after`,
        );
        for (const [i, s] of instances.entries())
          for (const d of dependencies)
            t.diagnostic(`  sis-${i + 1} ${d}: ${JSON.stringify(stateLines(s, d, from[i]!))}`);

        assert.doesNotMatch(`${readsBack} ${linesBack}`, /not within/, `${name}: recovered`);
        for (const [what, of] of [
          ['reads with a stale answer', known],
          ['those in its first second', firstSecond],
        ] as const)
          assert.ok(
            quantile(
              of.map((o) => o.ms),
              0.99,
            ) <= STALE_P99_MS,
            `${name}: ${what}: ${quantiles(of.map((o) => o.ms))}`,
          );
        for (const o of reads) {
          assert.ok(o.ms < BALANCER_TIMEOUT_MS, `${name}: a ${o.kind} read over ${o.binding} took ${o.ms} ms`);
          assert.ok(
            o.status === 200 || (o.kind === 'read-new' && o.status === 500),
            `${name}: ${o.kind} ${o.binding} ${o.status}`,
          );
        }
        for (const o of codes) {
          assert.ok(o.ms < BALANCER_TIMEOUT_MS, `${name}: an AuthCode over ${o.binding} took ${o.ms} ms`);
          assert.ok(o.status === 200 || o.status === 500, `${name}: AuthCode ${o.binding} ${o.status}`);
        }
        for (const [i, s] of instances.entries())
          for (const d of dependencies)
            assert.deepEqual(
              [stateLines(s, d, from[i]!).lost.length, stateLines(s, d, from[i]!).back.length],
              [1, 1],
              `sis-${i + 1}: one line when ${d} is lost, one when it is back`,
            );
        await calm();
      }

      // Exactly once: every code answered 200 is sent once, none answered with the fault is sent.
      const codes = outcomes.filter((o) => o.kind === 'authcode');
      const accepted = codes.filter((o) => o.status === 200).map((o) => o.phone!);
      const delivered = await gateway.delivered(accepted.length, 60_000);
      await sleep(3000); // anything sent late would arrive now
      const sent = countBy(gateway.received.filter((r) => r.status < 300).map((r) => r.phone));
      t.diagnostic(`AuthCode: ${codes.length} asked, ${accepted.length} answered 200, ${delivered.length} sent`);
      for (const phone of accepted) assert.equal(sent[phone], 1, `${phone}: answered 200, sent once`);
      for (const o of codes.filter((c) => c.status !== 200))
        assert.equal(sent[o.phone!], undefined, `${o.phone}: answered ${o.status}, never sent`);
    } finally {
      balancer?.stop();
      for (const s of instances) await stopServe(s);
      await dbProxy.close();
      await redisProxy.close();
      await gateway.close();
      redis.process.kill();
    }
  });
});

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
