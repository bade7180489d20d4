/**
 * AuthCode's commit deadline on one clock (issue 44, point 5): the service's host 3 s behind the
 * database server's (a VM after a suspend, a container host without NTP) must not have every code
 * refused at COMMIT. The host's clock is set back for one `sis serve` process only (its Date.now,
 * which every deadline of ours reads, through a module loaded first), against the shared test
 * database: codes are answered 200 and stored once, the difference is told at start and in
 * /readyz's text; and a COMMIT that reaches the server after its deadline is still refused
 * (database-partition.test.ts).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { startServe, stopServe } from '../helpers/serve-process.js';
import { adminClient, cleanupTargets, newSchema, POSTGRES_SKIP } from '../helpers/store-targets.js';
import { ask, authCode } from '../helpers/timed-requests.js';

after(cleanupTargets);

/** Loaded before the service: its Date.now `ms` behind the machine's clock (the database server's here). */
const clockBehind = (ms: number): string =>
  `--import=data:text/javascript,${encodeURIComponent(`const now = Date.now; Date.now = () => now() - ${ms};`)}`;

describe("AuthCode's deadline with the hosts' clocks apart", { skip: POSTGRES_SKIP ?? undefined }, () => {
  it('a host 3 s behind the database: codes stored, the difference told at start and in /readyz', async () => {
    const { schema, url } = newSchema('clock');
    const s = await startServe(url, {
      SIS_SHUTDOWN_GRACE_MS: '0',
      SIS_AUTH_CODES_PER_HOUR: '0',
      SIS_DATABASE_QUERY_TIMEOUT_MS: '2000',
      NODE_OPTIONS: clockBehind(3000),
    });
    try {
      const phones = ['+15550144001', '+15550144002', '+15550144003'];
      for (const phone of phones) {
        const answer = await authCode(s.url, phone, 10_000);
        assert.equal(answer.status, 200, answer.body);
      }
      const db = await adminClient();
      const { rows } = await db.query<{ phone: string }>(
        `select phone from "${schema}".auth_codes where phone = any($1) order by phone`,
        [phones],
      );
      assert.deepEqual(
        rows.map((r) => r.phone),
        phones,
      );
      await eventually(async () => {
        const ready = await ask(s.url, '/readyz', 5000);
        assert.equal(ready.status, 200);
        assert.match(
          ready.body,
          /^ready \(clock: this host's clock is (2\.[5-9]|3\.[0-5]) s behind the database server's\)\n$/,
        );
      });
      // Log lines reach stdout within half a second (the logger's buffer): waited for.
      const told = (): Record<string, unknown>[] => s.logs.filter((l) => typeof l['clockOffsetMs'] === 'number');
      await eventually(() => assert.equal(told().length, 1, JSON.stringify(told())));
      assert.equal(told()[0]!['level'], 40);
      assert.ok(Math.abs(Number(told()[0]!['clockOffsetMs']) - 3000) < 500, String(told()[0]!['clockOffsetMs']));
      assert.match(String(told()[0]!['msg']), /behind the database server's: no write is refused for it/);
    } finally {
      await stopServe(s);
    }
  });

  it('clocks together: nothing told', async () => {
    const { url } = newSchema('clock-ok');
    const s = await startServe(url, { SIS_SHUTDOWN_GRACE_MS: '0', SIS_DATABASE_QUERY_TIMEOUT_MS: '2000' });
    try {
      assert.equal((await authCode(s.url, '+15550144010', 10_000)).status, 200);
      assert.equal((await ask(s.url, '/readyz', 5000)).body, 'ready\n');
      assert.deepEqual(
        s.logs.filter((l) => l['clockOffsetMs'] !== undefined),
        [],
      );
    } finally {
      await stopServe(s);
    }
  });
});
