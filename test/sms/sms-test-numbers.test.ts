/**
 * Issue 33 point 5 (SMS parts): test numbers have an hourly limit per number (a leaked one is no
 * free path), and the start warns when they are set under NODE_ENV=production.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { authCode, backends, midHour, refusals, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

for (const backend of backends.filter((b) => !b.name.includes('Redis'))) {
  describe(`test numbers on ${backend.name}`, { skip: backend.skip ?? false }, () => {
    it('accepts at most SIS_SMS_TEST_CODES_PER_HOUR codes an hour per test number, none sent', async () => {
      const { db, env } = await backend.fresh();
      const server = await startTestServer({
        env: {
          ...SMS_DEFAULTS,
          ...env,
          SIS_SMS_TEST_NUMBERS: '+15550100,+966500000001',
          SIS_SMS_TEST_CODES_PER_HOUR: '4',
        },
        now: midHour(),
      });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) statuses.push((await authCode(server.url, '+15550100', `10.5.0.${i}`)).status);
        assert.deepEqual(statuses, [200, 200, 200, 200, 500, 500]);
        const refused = await authCode(server.url, '+15550100', '10.5.1.1');
        assert.match(refused.text, /^Codes cannot be sent to this phone right now\. Try again in 30 minutes\.$/);
        assert.equal((await authCode(server.url, '0500000001', '10.5.1.2')).status, 200, 'another test number');
        assert.deepEqual(Object.fromEntries(await refusals(server.url)), { 'test-hourly': 3 });
      } finally {
        await server.close();
      }
      assert.equal(Number((await db.sql('select count(*) as n from auth_codes where test = 1'))[0]!.n), 5);
      assert.equal(Number((await db.sql('select count(*) as n from outbox'))[0]!.n), 0);
    });
  });
}

describe('test numbers in production', () => {
  it('warns at start under NODE_ENV=production, and only there', async () => {
    const before = process.env['NODE_ENV'];
    const started = async (nodeEnv: string): Promise<string[]> => {
      const lines: string[] = [];
      process.env['NODE_ENV'] = nodeEnv;
      try {
        const server = await startTestServer({
          env: { ...SMS_DEFAULTS, SIS_SMS_TEST_NUMBERS: '+15550100', LOG_LEVEL: 'warn' },
          logDestination: new Writable({
            write(chunk: Buffer, _enc, cb) {
              lines.push(chunk.toString());
              cb();
            },
          }),
        });
        await server.close();
      } finally {
        if (before === undefined) delete process.env['NODE_ENV'];
        else process.env['NODE_ENV'] = before;
      }
      return lines.filter((l) => l.includes('SIS_SMS_TEST_NUMBERS'));
    };
    const production = await started('production');
    assert.equal(production.length, 1);
    assert.match(production[0]!, /SIS_SMS_TEST_NUMBERS is set under NODE_ENV=production/);
    assert.deepEqual(await started('development'), []);
  });
});
