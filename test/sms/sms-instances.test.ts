/**
 * Two instances on one database (and one Redis, for that backend) share every velocity counter:
 * codes asked of either count against the same address, range, country and budget.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { authCode, backends, midHour, refusals, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const LIMITS = {
  SIS_AUTH_CODES_PER_ADDRESS_HOUR: '6',
  SIS_AUTH_CODES_PER_RANGE_HOUR: '8',
  SIS_SMS_COUNTRY_DAILY_LIMITS: 'SA=16',
  SIS_SMS_HOURLY_BUDGET: '20',
};

for (const backend of backends) {
  describe(`two instances on ${backend.name}`, { skip: backend.skip ?? false }, () => {
    it('share the address, range, country and budget counters', async () => {
      const { db, env } = await backend.fresh();
      const now = midHour();
      const servers: TestServer[] = [];
      try {
        for (let i = 0; i < 2; i++)
          servers.push(await startTestServer({ env: { ...SMS_DEFAULTS, ...env, ...LIMITS }, now }));
        const ask = async (phones: readonly string[], address: (i: number) => string): Promise<number[]> => {
          const out: number[] = [];
          for (const [i, phone] of phones.entries())
            out.push((await authCode(servers[i % 2]!.url, phone, address(i))).status);
          return out.map((s) => (s === 200 ? 1 : 0));
        };
        const accepted = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
        // One address, ten ranges: six codes.
        const byAddress = await ask(
          Array.from({ length: 10 }, (_, i) => `+9665${50 + i}000001`),
          () => '10.9.0.1',
        );
        assert.equal(accepted(byAddress), 6);
        // One range, ten addresses: eight codes (sixteen Saudi codes so far, 14 of them here and above).
        assert.equal(
          accepted(
            await ask(
              Array.from({ length: 10 }, (_, i) => `+96656777000${i}`),
              (i) => `10.9.1.${i}`,
            ),
          ),
          8,
        );
        // The country's sixteen: two more.
        assert.equal(
          accepted(
            await ask(
              Array.from({ length: 4 }, (_, i) => `+9665${80 + i}123456`),
              (i) => `10.9.2.${i}`,
            ),
          ),
          2,
        );
        // The budget's twenty: four more, of another country.
        assert.equal(
          accepted(
            await ask(
              Array.from({ length: 6 }, (_, i) => `+9715${[0, 2, 4, 5, 6, 8][i]}1234567`),
              (i) => `10.9.3.${i}`,
            ),
          ),
          4,
        );
        const total = new Map<string, number>();
        for (const server of servers)
          for (const [reason, n] of await refusals(server.url)) total.set(reason, (total.get(reason) ?? 0) + n);
        assert.deepEqual(Object.fromEntries(total), { address: 4, range: 2, 'country-daily': 2, 'budget-hourly': 2 });
      } finally {
        for (const server of servers) await server.close();
      }
      assert.equal(Number((await db.sql('select count(*) as n from outbox'))[0]!.n), 20);
    });
  });
}
