/**
 * Issue 33 point 3: monitor mode never lifts an operator's brake. A bare SIS_SMS_GUARD=monitor
 * (the rollout's first step) still refuses a blocked range, a premium-rate number and codes past
 * the budget (today all five of the codes were queued); only a layer named
 * (`budget=monitor`) watches; the start says in one line which layers do not enforce; `sis sms
 * block-range` says when the setting leaves blocks only watched. A block holds for the next code
 * on every instance: two instances on PostgreSQL, a quiet second, a block, and the next code on
 * either is refused (the range cache no longer answers from its old list while it reads).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runSis } from '../helpers/serve-process.js';
import { authCode, backends, midHour, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const sqlite = backends.find((b) => b.name === 'SQLite')!;
const postgres = backends.find((b) => b.name === 'PostgreSQL')!;

describe('the operator’s brakes under monitor mode', () => {
  it('refuses a blocked range, a premium number and codes past the budget with a bare monitor; logs the watched layers', async () => {
    const { db, env } = await sqlite.fresh();
    const lines: string[] = [];
    const logDestination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const settings = {
      ...SMS_DEFAULTS,
      ...env,
      SIS_SMS_GUARD: 'monitor',
      SIS_SMS_HOURLY_BUDGET: '2',
      LOG_LEVEL: 'warn',
    };
    assert.equal((await runSis(['migrate'], db.url)).code, 0);
    const block = await runSis(['sms', 'block-range', '+96653111'], db.url, { SIS_SMS_GUARD: 'monitor' });
    assert.equal(block.code, 0, block.stderr);
    assert.equal(block.stderr, '', 'blocks enforce under a bare monitor: nothing to warn of');
    const server = await startTestServer({ env: settings, now: midHour(), logDestination });
    try {
      const blocked = await authCode(server.url, '+966531110001', '10.3.0.1');
      const premium = await authCode(server.url, '+1 900 555 0123', '10.3.0.2');
      assert.deepEqual(
        [blocked.status, premium.status],
        [500, 500],
        `${blocked.text} / ${premium.text}: the block and the number rule hold`,
      );
      assert.match(premium.text, /premium-rate numbers are not accepted/);
      const budget: number[] = [];
      for (let i = 0; i < 3; i++) budget.push((await authCode(server.url, `+9665512340${i}0`, `10.3.1.${i}`)).status);
      assert.deepEqual(budget, [200, 200, 500], 'the budget of 2 holds');
      const watched = lines.filter((l) => l.includes('not enforced'));
      assert.equal(watched.length, 1, lines.join(''));
      assert.match(watched[0]!, /not enforced \(SIS_SMS_GUARD, monitor mode\): address, range, country-daily, phone;/);
    } finally {
      await server.close();
    }
    assert.equal(Number((await db.sql('select count(*) as n from outbox'))[0]!.n), 2);
    // Named, the budget watches too; block-range then says that blocks only watch where it is named.
    const server2 = await startTestServer({
      env: { ...settings, SIS_SMS_GUARD: 'monitor,budget=monitor,blocked-range=monitor' },
      now: midHour(),
    });
    try {
      assert.equal((await authCode(server2.url, '+966551234300', '10.3.2.1')).status, 200, 'budget watched');
      assert.equal((await authCode(server2.url, '+966531110002', '10.3.2.2')).status, 200, 'block watched');
    } finally {
      await server2.close();
    }
    const watchedBlock = await runSis(['sms', 'block-range', '+96653222'], db.url, {
      SIS_SMS_GUARD: 'monitor,blocked-range=monitor',
    });
    assert.equal(watchedBlock.code, 0, watchedBlock.stderr);
    assert.match(watchedBlock.stderr, /SIS_SMS_GUARD watches blocked-range only \(monitor\): .*still send codes/);
  });
});

describe('a block on every instance', { skip: postgres.skip ?? false }, () => {
  it('refuses the next code on each of two PostgreSQL instances after a quiet second', async () => {
    const { db, env } = await postgres.fresh();
    const servers: TestServer[] = [];
    try {
      for (let i = 0; i < 2; i++)
        servers.push(await startTestServer({ env: { ...SMS_DEFAULTS, ...env }, now: midHour() }));
      // Both have read the (empty) list of blocks for a code of their own.
      for (const [i, s] of servers.entries())
        assert.equal((await authCode(s.url, `+96653333000${i}`, '10.4.0.1')).status, 200);
      // A quiet second: each list is older than its refresh interval when the block comes.
      await sleep(1100);
      const block = await runSis(['sms', 'block-range', '+96653333'], db.url);
      assert.equal(block.code, 0, block.stderr);
      for (const [i, s] of servers.entries()) {
        const next = await authCode(s.url, `+96653333001${i}`, '10.4.0.2');
        assert.equal(next.status, 500, `instance ${i}: ${next.text}`);
        assert.match(next.text, /^Codes cannot be sent to this phone right now\./);
      }
    } finally {
      for (const s of servers) await s.close();
    }
  });
});
