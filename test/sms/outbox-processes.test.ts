/**
 * Nothing lost, nothing twice, with real processes (`sis serve`) and a real local gateway:
 * a code accepted while the gateway is down survives a SIGKILL right after the answer and is
 * delivered once the service is back with a gateway; and two instances on one PostgreSQL schema,
 * fed codes through both, deliver each code exactly once (the gateway failing now and then, so
 * retries move between instances), every request signed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { operations } from '../../src/operations/index.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { startServe, stopServe } from '../helpers/serve-process.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { closedPort, eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { cleanupTargets, newSchema, POSTGRES_SKIP } from '../helpers/store-targets.js';

const AuthCode = operations.find((o) => o.name === 'AuthCode')!;
const soap = bindingClients.find((c) => c.name === 'soap11')!;
const SECRET = 'process-test-secret-of-32-bytes-or-more';
const dir = mkdtempSync(join(tmpdir(), 'sis-outbox-processes-'));

after(async () => {
  await cleanupTargets();
  rmSync(dir, { recursive: true, force: true });
});

const start = (databaseUrl: string, webhook: string, extra: Record<string, string> = {}): Promise<ServeProcess> =>
  startServe(databaseUrl, {
    SIS_SHUTDOWN_GRACE_MS: '0',
    SIS_SMS_WEBHOOK_URL: webhook,
    SIS_SMS_WEBHOOK_SECRET: SECRET,
    SIS_SMS_WEBHOOK_TIMEOUT_MS: '1000',
    SIS_OUTBOX_LEASE_MS: '2000',
    SIS_OUTBOX_BACKOFF_MS: '50',
    SIS_OUTBOX_POLL_MS: '50',
    ...extra,
  });

function outbox(file: string): { code: string; state: string; attempts: number }[] {
  return sqliteRows(file, 'select code, state, attempts from outbox order by id');
}

describe('outbox across processes', () => {
  test('a code accepted while the gateway is down survives SIGKILL right after the answer, and is delivered after a restart', async () => {
    const file = join(dir, 'crash.db');
    const url = `sqlite:${file}`;
    const down = await start(url, `http://127.0.0.1:${await closedPort()}/sms`);
    const { res } = await soap.call(down.url, AuthCode, { code: 'SURVIVOR-1', phone: '+1 555 0100 999' });
    down.process.kill('SIGKILL');
    assert.equal(res.status, 200, 'the code was accepted');
    await new Promise((resolve) => down.process.once('exit', resolve));
    assert.deepEqual(
      outbox(file).map((m) => [m.code, m.state]),
      [['SURVIVOR-1', 'pending']],
      'the message outlived the process',
    );

    const gateway = await startSmsGateway(SECRET);
    const up = await start(url, gateway.url);
    try {
      const [sms] = await gateway.delivered(1);
      assert.deepEqual([sms!.code, sms!.phone, sms!.signed], ['SURVIVOR-1', '+15550100999', true]);
      const [row] = await eventually(() => {
        const rows = outbox(file);
        return rows[0]?.state === 'delivered' ? rows : undefined;
      });
      assert.ok(row!.attempts >= 1);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(gateway.received.length, 1, 'sent once');
    } finally {
      assert.equal(await stopServe(up), 0);
      await gateway.close();
    }
    for (const line of [...down.lines, ...up.lines])
      assert.ok(!line.includes('SURVIVOR-1') && !line.includes('0100999'), `no code or phone in: ${line}`);
  });

  test(
    'two instances on one PostgreSQL schema deliver each of N codes exactly once',
    { skip: POSTGRES_SKIP ?? undefined, timeout: 60_000 },
    async (t) => {
      // Every fifth request fails: those messages are retried, by whichever instance claims them next.
      const gateway = await startSmsGateway(SECRET, (n) => (n % 5 === 4 ? 500 : 200));
      const { url } = newSchema('outbox');
      const [a, b] = await Promise.all([start(url, gateway.url), start(url, gateway.url)]);
      const N = 40;
      const codes = Array.from({ length: N }, (_, i) => `multi-${i}`);
      try {
        const answers = await Promise.all(
          codes.map(
            async (code, i) =>
              (
                await soap.call((i % 2 === 0 ? a : b).url, AuthCode, {
                  code,
                  phone: `+1555020${String(i).padStart(4, '0')}`,
                })
              ).res.status,
          ),
        );
        assert.deepEqual(new Set(answers), new Set([200]));
        const delivered = await gateway.delivered(N, 30_000);
        // Give a duplicate, were there one, the time to arrive.
        await new Promise((r) => setTimeout(r, 500));
        const ok = gateway.received.filter((r) => r.status === 200);
        assert.equal(ok.length, N, 'no code delivered twice');
        assert.deepEqual(delivered.map((r) => r.code).sort(), [...codes].sort());
        assert.ok(
          gateway.received.every((r) => r.signed),
          'every request signed with the secret',
        );
        assert.ok(
          gateway.received.some((r) => r.status === 500),
          'some attempts failed and were retried',
        );
        // Log lines reach stdout in batches, at most LOG_FLUSH_MS after they are written.
        const workers = await eventually(
          () => {
            const counts = [a, b].map((i) => i.lines.filter((l) => l.includes('"outbox: delivered"')).length);
            return counts[0]! + counts[1]! >= N ? counts : undefined;
          },
          5_000,
          'a log line for every delivery',
        );
        assert.equal(workers[0]! + workers[1]!, N);
        t.diagnostic(`delivered by instance a: ${workers[0]}, b: ${workers[1]}`);
      } finally {
        const codesOut = await Promise.all([stopServe(a), stopServe(b)]);
        await gateway.close();
        assert.deepEqual(codesOut, [0, 0]);
      }
    },
  );
});
