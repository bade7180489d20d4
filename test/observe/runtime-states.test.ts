/**
 * Failures an operator must act on while the service runs, made for real against the real
 * `sis serve`: the database lost (PostgreSQL behind a proxy that stops), the disk full (SQLite on a
 * small tmpfs), the SMS gateway refusing every message, Redis unreachable. Each is logged once when
 * it starts and once when it ends, whatever the number of requests meanwhile; /readyz names it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LOG_FLUSH_MS } from '../../src/logging/logger.js';
import { eventually } from '../helpers/eventually.js';
import { startServe, stopServe } from '../helpers/serve-process.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startSmsGateway } from '../helpers/sms-gateway.js';
import { cleanupTargets, newSchema, POSTGRES_SKIP, postgresUrl } from '../helpers/store-targets.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { fillDisk, mountTmpfs } from '../helpers/tmpfs.js';

after(cleanupTargets);

const token = (s: ServeProcess): Promise<number> =>
  fetch(`${s.url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`).then(drain);
const authCode = (s: ServeProcess, phone: string): Promise<number> =>
  fetch(`${s.url}/AuthCodeSending.asmx/AuthCode`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `code=1234&phone=${encodeURIComponent(phone)}`,
  }).then(drain);
const readyz = async (s: ServeProcess): Promise<string> => {
  const res = await fetch(`${s.url}/readyz`);
  return `${res.status} ${await res.text()}`;
};
/** One sample of /metrics (its name and labels as written), as a number. */
async function metric(s: ServeProcess, series: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  assert.ok(line !== undefined, `${series} in /metrics`);
  return Number(line.split(' ').pop());
}
async function drain(res: Response): Promise<number> {
  await res.arrayBuffer();
  return res.status;
}

/** The service's log is buffered: what it wrote is in the pipe at most LOG_FLUSH_MS later. */
const logWritten = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS + 300));

/** The state lines of one dependency: [failed at error/warn, back to normal]. */
function stateLines(
  s: ServeProcess,
  dependency: string,
): { down: Record<string, unknown>[]; back: Record<string, unknown>[] } {
  const mine = s.logs.filter((l) => l['dependency'] === dependency);
  return {
    down: mine.filter((l) => !String(l['msg']).includes(' back to normal after ')),
    back: mine.filter((l) => String(l['msg']).includes(' back to normal after ')),
  };
}

describe('run-time failures, logged once per change', () => {
  it(
    'PostgreSQL lost: one error line, known reads answered as before, others a fault, /readyz 200 naming it; one line when it is back',
    { skip: POSTGRES_SKIP ?? false, timeout: 60_000 },
    async () => {
      const target = new URL(postgresUrl);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      await proxy.start();
      const via = new URL(newSchema('lost').url);
      via.host = `127.0.0.1:${proxy.port}`;
      const s = await startServe(via.toString(), { SIS_DEMO_DATA: 'true', SIS_SHUTDOWN_GRACE_MS: '0' });
      const tokenOf = async (id: string): Promise<string> => {
        const res = await fetch(`${s.url}/PushNotificationMobile.asmx/GetTokenDevice?id=${id}`);
        return `${res.status} ${await res.text()}`;
      };
      try {
        // The demo data is loaded just after the start.
        await eventually(async () => assert.match(await tokenOf('1'), /^200 .*tok-AAA-111/s));
        const known = await tokenOf('1');
        await proxy.stop();
        for (let i = 0; i < 4; i++) assert.equal(await tokenOf('1'), known, 'a read answered before: the same bytes');
        for (let i = 0; i < 8; i++) assert.equal(await token(s), 200);
        for (let i = 0; i < 8; i++) assert.match(await tokenOf('2'), /^500 /, 'a read never answered: the fault');
        assert.equal(await readyz(s), '200 ready (degraded: database unavailable)\n');
        assert.equal(await readyz(s), '200 ready (degraded: database unavailable)\n');
        await logWritten();
        const { down } = stateLines(s, 'database');
        assert.equal(down.length, 1, JSON.stringify(down));
        assert.equal(down[0]!['level'], 50);
        assert.match(
          String(down[0]!['msg']),
          /^database unavailable: reads this instance answered lately are answered the same \(SIS_STALE_IF_ERROR_MS\), other requests with a server fault \(HTTP 500\); \/readyz stays 200/,
        );
        assert.ok(!s.logs.some((l) => l['msg'] === 'operation failed'), 'no error line per request');
        assert.equal(
          s.logs.filter((l) => l['msg'] === 'request' && l['database'] === 'unavailable').length,
          8,
          'each failed request is an ordinary info line',
        );
        assert.equal(await metric(s, 'sis_answers_stale_total'), 12);
        assert.equal(await metric(s, 'sis_dependency_up{dependency="database"}'), 0);

        await proxy.start();
        await eventually(async () => assert.match(await tokenOf('2'), /^200 /), 20_000);
        await eventually(() => assert.equal(stateLines(s, 'database').back.length, 1));
        assert.equal(await readyz(s), '200 ready\n');
        assert.equal(await metric(s, 'sis_dependency_up{dependency="database"}'), 1);
        assert.equal(stateLines(s, 'database').down.length, 1, 'still one line for the outage');
        assert.match(
          String(stateLines(s, 'database').back[0]!['msg']),
          /^database back to normal after \d+ s \(\d+ failed calls meanwhile\)$/,
        );
      } finally {
        await stopServe(s);
        await proxy.stop();
      }
    },
  );

  it(
    'PostgreSQL lost: a known read is answered as before for SIS_STALE_IF_ERROR_MS, then faulted',
    { skip: POSTGRES_SKIP ?? false, timeout: 60_000 },
    async () => {
      const target = new URL(postgresUrl);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      await proxy.start();
      const via = new URL(newSchema('stale').url);
      via.host = `127.0.0.1:${proxy.port}`;
      const s = await startServe(via.toString(), {
        SIS_DEMO_DATA: 'true',
        SIS_SHUTDOWN_GRACE_MS: '0',
        SIS_STALE_IF_ERROR_MS: '1500',
      });
      const school = async (): Promise<string> => {
        const res = await fetch(
          `${s.url}/NotificationNotes.asmx/GetStudentSchool?school_base_url=http%3A%2F%2Fschool-a.example&show_active=1`,
        );
        return `${res.status} ${await res.text()}`;
      };
      try {
        await eventually(async () => assert.match(await school(), /^200 .*Ngstr|^200 .*ngstr/is));
        const known = await school();
        await proxy.stop();
        assert.equal(await school(), known, 'answered as before');
        await new Promise((resolve) => setTimeout(resolve, 2000));
        assert.match(await school(), /^500 /, 'no longer once older than SIS_STALE_IF_ERROR_MS');
      } finally {
        await stopServe(s);
        await proxy.stop();
      }
    },
  );

  const tmpfs = mountTmpfs();
  it(
    'the disk full (SQLite on a small tmpfs): writes fail, reads are answered, one line each way',
    { skip: tmpfs.skip },
    async () => {
      const s = await startServe(`sqlite:${join(tmpfs.dir, 'sis.db')}`, {
        SIS_DEMO_DATA: 'true',
        SIS_AUTH_CODES_PER_HOUR: '0',
        SIS_SHUTDOWN_GRACE_MS: '0',
      });
      const filler = join(tmpfs.dir, 'filler');
      try {
        assert.equal(await authCode(s, '+15550100700'), 200);
        fillDisk(filler);
        for (let i = 1; i <= 4; i++) assert.equal(await authCode(s, `+1555010070${i}`), 500);
        assert.equal(await token(s), 200, 'reads are still answered');
        assert.equal(await readyz(s), '200 ready (degraded: database writes failing (disk full))\n');
        await logWritten();
        const { down } = stateLines(s, 'database writes');
        assert.equal(down.length, 1, JSON.stringify(down));
        assert.equal(down[0]!['level'], 50);
        assert.match(
          String(down[0]!['msg']),
          /^database writes failing \(disk full\): AuthCode \(every write\) is answered with a server fault, reads are still answered; free space/,
        );
        assert.equal(down[0]!['reason'], 'database or disk is full (SQLITE_FULL)');

        rmSync(filler);
        assert.equal(await authCode(s, '+15550100709'), 200);
        // Back once it has worked for RECOVERY_SETTLE_MS, and the line written.
        await eventually(() => assert.equal(stateLines(s, 'database writes').back.length, 1));
        assert.equal(await readyz(s), '200 ready\n');
      } finally {
        await stopServe(s);
        tmpfs.unmount();
      }
    },
  );

  it(
    'the SMS gateway refusing every message: one error line, codes wait; one line once it delivers',
    { timeout: 30_000 },
    async () => {
      let answer = 503;
      const gateway = await startSmsGateway('state-secret-of-at-least-32-bytes-long', () => answer);
      const dir = mkdtempSync(join(tmpdir(), 'sis-gateway-state-'));
      const s = await startServe(`sqlite:${join(dir, 'sis.db')}`, {
        SIS_SMS_WEBHOOK_URL: gateway.url,
        SIS_SMS_WEBHOOK_SECRET: 'state-secret-of-at-least-32-bytes-long',
        SIS_SMS_WEBHOOK_TIMEOUT_MS: '1000',
        SIS_OUTBOX_LEASE_MS: '2000',
        SIS_OUTBOX_BACKOFF_MS: '20',
        SIS_OUTBOX_POLL_MS: '50',
        SIS_OUTBOX_MAX_ATTEMPTS: '50',
        SIS_SHUTDOWN_GRACE_MS: '0',
      });
      try {
        assert.equal(await authCode(s, '+15550100801'), 200);
        assert.equal(await authCode(s, '+15550100802'), 200);
        await eventually(() => assert.ok(gateway.received.length >= 6, `${gateway.received.length} attempts`));
        await logWritten();
        const { down } = stateLines(s, 'SMS gateway');
        assert.equal(down.length, 1, JSON.stringify(down));
        assert.equal(down[0]!['level'], 50);
        assert.match(
          String(down[0]!['msg']),
          /^SMS gateway refusing messages: codes accepted by AuthCode are not delivered: they wait in the outbox and are retried/,
        );
        assert.equal(down[0]!['reason'], 'gateway answered 503');
        assert.ok(
          !s.logs.some((l) => l['msg'] === 'outbox: will retry' && Number(l['level']) >= 40),
          'no warning per attempt',
        );
        assert.equal(await readyz(s), '200 ready (degraded: SMS gateway refusing messages)\n');

        answer = 200;
        await gateway.delivered(2);
        await eventually(() => assert.equal(stateLines(s, 'SMS gateway').back.length, 1));
        assert.equal(stateLines(s, 'SMS gateway').down.length, 1);
        assert.equal(await readyz(s), '200 ready\n');
      } finally {
        await stopServe(s);
        await gateway.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  const redisUrl = process.env['SIS_TEST_REDIS_URL'] ?? '';
  const redisSkip = redisUrl === '' ? 'SIS_TEST_REDIS_URL not set: Redis tests skipped' : false;

  /**
   * A service counting its rate limits in the test Redis through a TCP proxy, and through a relay
   * in front of the proxy that counts the connections the service opens; all stopped after `body`.
   */
  async function besideRedis(
    label: string,
    env: Record<string, string>,
    body: (s: ServeProcess, proxy: TcpProxy, opened: () => number) => Promise<void>,
  ): Promise<void> {
    const target = new URL(redisUrl);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.start();
    let opened = 0;
    const relay = createServer((client) => {
      opened++;
      const upstream = connect(proxy.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const)
        a.on('error', () => b.destroy()).on('close', () => b.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), `sis-redis-${label}-`));
    const s = await startServe(`sqlite:${join(dir, 'sis.db')}`, {
      SIS_DEMO_DATA: 'true',
      SIS_RATE_LIMIT: '1000/1s',
      SIS_REDIS_URL: `redis://127.0.0.1:${(relay.address() as AddressInfo).port}`,
      SIS_SHUTDOWN_GRACE_MS: '0',
      ...env,
    });
    try {
      await body(s, proxy, () => opened);
    } finally {
      await stopServe(s);
      relay.close();
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it(
    'Redis unreachable: requests let through, one warning; one line when it answers again',
    { skip: redisSkip, timeout: 30_000 },
    () =>
      besideRedis('state', {}, async (s, proxy) => {
        assert.equal(await token(s), 200);
        await proxy.stop();
        for (let i = 0; i < 6; i++) assert.equal(await token(s), 200, 'let through');
        await eventually(() => assert.equal(stateLines(s, 'Redis').down.length, 1));
        const { down } = stateLines(s, 'Redis');
        assert.equal(down[0]!['level'], 40);
        assert.match(
          String(down[0]!['msg']),
          /^Redis unreachable: rate limits \(SIS_RATE_LIMIT\) are not enforced: requests are let through until it answers again/,
        );
        assert.equal(await readyz(s), '200 ready (degraded: Redis unreachable)\n');

        await proxy.start();
        await eventually(() => assert.equal(stateLines(s, 'Redis').back.length, 1), 15_000);
        assert.equal(await token(s), 200);
        assert.equal(await readyz(s), '200 ready\n');
        assert.equal(stateLines(s, 'Redis').down.length, 1, 'still one line for the outage');
      }),
  );

  it(
    'Redis partitioned: requests wait for it at most SIS_STALE_AFTER_MS until it is known lost (never its deadline), then nothing while one probe at a time looks; one line each way; /readyz and sis_dependency_up follow',
    { skip: redisSkip, timeout: 60_000 },
    () => {
      const deadlineMs = 2000;
      return besideRedis('partition', { SIS_REDIS_TIMEOUT_MS: String(deadlineMs) }, async (s, proxy, opened) => {
        const timed = async (): Promise<number> => {
          const started = Date.now();
          assert.equal(await token(s), 200, 'let through');
          return Date.now() - started;
        };
        assert.equal(await token(s), 200);
        assert.equal(await metric(s, 'sis_dependency_up{dependency="redis"}'), 1);
        proxy.pause(); // connections kept, nothing answered: not a refusal
        const before = opened();
        const partitioned = Date.now();
        // The rate limit's answer is waited for at most SIS_STALE_AFTER_MS (250 ms by default), then
        // the request is let through: Redis's deadline never adds to the database's (issue 45).
        const first = await timed();
        assert.ok(
          first >= 200 && first < deadlineMs / 2,
          `the first request waited 250 ms, not the deadline (${first} ms)`,
        );
        await eventually(() => assert.equal(stateLines(s, 'Redis').down.length, 1));
        // Known lost: twenty requests together take less than one deadline (each paid 500 ms before).
        let twenty = 0;
        for (let i = 0; i < 20; i++) twenty += await timed();
        assert.ok(twenty < deadlineMs, `twenty requests once Redis is known lost took ${twenty} ms in all`);
        assert.equal(await readyz(s), '200 ready (degraded: Redis unreachable)\n');
        assert.equal(await metric(s, 'sis_dependency_up{dependency="redis"}'), 0);
        // One probe at a time, each a fresh connection waiting at most the deadline, a second apart.
        const probes = opened() - before;
        const most = Math.ceil((Date.now() - partitioned) / (deadlineMs + 1000)) + 1;
        assert.ok(probes >= 1 && probes <= most, `${probes} connections opened in the partition (at most ${most})`);

        proxy.resume();
        await eventually(() => assert.equal(stateLines(s, 'Redis').back.length, 1), 15_000);
        assert.equal(await readyz(s), '200 ready\n');
        assert.equal(await metric(s, 'sis_dependency_up{dependency="redis"}'), 1);
        assert.equal(await token(s), 200);
        await logWritten();
        assert.deepEqual(
          [stateLines(s, 'Redis').down.length, stateLines(s, 'Redis').back.length],
          [1, 1],
          'one line when lost, one when back',
        );
      });
    },
  );
});
