/**
 * The number rules and the budget, on SQLite, PostgreSQL and with Redis: premium-rate, shared-cost
 * and toll-free numbers refused for their type, other countries refused under SIS_SMS_COUNTRIES,
 * a local number read in the default region's format, a budget that refuses every code once
 * reached and says so in one error line (one more when codes are accepted again), and an
 * operator's block of one range taking effect in running services without a restart.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { runSis } from '../helpers/serve-process.js';
import { authCode, backends, midHour, refusals, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

for (const backend of backends) {
  describe(`SMS number rules and budget on ${backend.name}`, { skip: backend.skip ?? false }, () => {
    it('refuses premium-rate, shared-cost and toll-free numbers and other countries; reads 0501234567 as +966501234567', async () => {
      const { db, env } = await backend.fresh();
      const server = await startTestServer({
        env: { ...SMS_DEFAULTS, ...env, SIS_SMS_COUNTRIES: 'SA,US,GB' },
        now: midHour(),
      });
      try {
        for (const phone of ['+1 900 555 0123', '+44 909 012 3456', '+44 871 234 5678', '+1 800 555 0123']) {
          const answer = await authCode(server.url, phone, '10.0.0.1');
          assert.equal(answer.status, 500, phone);
          assert.match(answer.text, /^This phone cannot receive codes: [a-z-]+ numbers are not accepted\./, phone);
        }
        const abroad = await authCode(server.url, '+971 50 123 4567', '10.0.0.2');
        assert.match(abroad.text, /^This phone cannot receive codes: codes are not sent to its country\./);
        assert.equal((await authCode(server.url, '0501234567', '10.0.0.3')).status, 200);
        assert.equal((await authCode(server.url, '+44 7400 123456', '10.0.0.4')).status, 200);
        assert.deepEqual(Object.fromEntries(await refusals(server.url)), { 'number-type': 4, country: 1 });
      } finally {
        await server.close();
      }
      assert.deepEqual(
        (await db.sql('select phone, country from auth_codes order by id')).map((r) => [r.phone, r.country]),
        [
          ['+966501234567', 'SA'],
          ['+447400123456', 'GB'],
        ],
      );
    });

    it('refuses every code once the hourly budget is reached, logging it once', async () => {
      const { env } = await backend.fresh();
      const lines: string[] = [];
      const logDestination = new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      });
      const server = await startTestServer({
        env: { ...SMS_DEFAULTS, ...env, SIS_SMS_HOURLY_BUDGET: '5', LOG_LEVEL: 'warn' },
        now: midHour(),
        logDestination,
      });
      try {
        const answers = [];
        for (let i = 0; i < 9; i++)
          answers.push(await authCode(server.url, `+96655${1000000 + i * 10_000}`, `10.1.0.${i}`));
        assert.deepEqual(
          answers.map((a) => a.status),
          [200, 200, 200, 200, 200, 500, 500, 500, 500],
        );
        assert.equal(answers[5]!.text, 'Codes cannot be sent to this phone right now. Try again in 30 minutes.');
        assert.deepEqual(Object.fromEntries(await refusals(server.url)), { 'budget-hourly': 4 });
        const budgetLines = lines.filter((l) => l.includes('SMS budget reached'));
        assert.equal(budgetLines.length, 1, 'one error line for the state change, not one per refusal');
        assert.match(budgetLines[0]!, /"level":50/);
        assert.match(budgetLines[0]!, /SIS_SMS_HOURLY_BUDGET/);
      } finally {
        await server.close();
      }
    });

    it('stops a blocked range at once in the running service (sis sms block-range), and lets it through again', async () => {
      const { db, env } = await backend.fresh();
      // Velocity limits off: until the block is read (within a second) the loop's codes are
      // accepted, and on a fast machine they would fill the range's hourly limit.
      const unlimited = { SIS_AUTH_CODES_PER_RANGE_HOUR: '0', SIS_AUTH_CODES_PER_ADDRESS_HOUR: '0' };
      const server = await startTestServer({ env: { ...SMS_DEFAULTS, ...env, ...unlimited }, now: midHour() });
      try {
        assert.equal((await authCode(server.url, '+966531110000', '10.2.0.1')).status, 200);
        const blocked = await runSis(['sms', 'block-range', '+96653111', '--for', '24h'], db.url);
        assert.equal(blocked.code, 0, blocked.stderr);
        let i = 1;
        await eventually(async () => {
          const answer = await authCode(server.url, `+96653111${String(i++).padStart(4, '0')}`, '10.2.0.2');
          // 24 hours from now, counted from the test's clock (the middle of this hour).
          assert.match(answer.text, /^Codes cannot be sent to this phone right now\. Try again in 2[45] hours\.$/);
        }, 5000);
        assert.equal((await authCode(server.url, '+966531120000', '10.2.0.3')).status, 200, 'another range goes on');
        const listed = await runSis(['sms', 'blocked'], db.url);
        assert.match(listed.stdout, /^\+96653111\t\d{4}-\d\d-\d\dT[\d:.]+Z\t/m);
        assert.equal((await runSis(['sms', 'allow-range', '+96653111'], db.url)).code, 0);
        await eventually(async () => {
          const answer = await authCode(server.url, `+96653111${String(i++).padStart(4, '0')}`, '10.2.0.4');
          assert.equal(answer.status, 200, answer.text);
        }, 5000);
      } finally {
        await server.close();
      }
    });
  });
}
