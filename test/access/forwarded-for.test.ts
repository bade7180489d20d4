/**
 * The client's address behind a trusted proxy (src/http/origin.ts): X-Forwarded-For is walked from
 * the right, and a hop that is not an IP address ends the walk at the last address believed (the
 * proxy's), so a client cannot make itself a new address, and a new SMS address counter, with
 * words. Counted by AuthCode's address limit over real HTTP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authCode, refusals, saudiMobiles } from '../helpers/sms-calls.js';
import { startTestServer } from '../helpers/test-server.js';

describe('X-Forwarded-For from a trusted proxy', () => {
  it('ends at a hop that is not an IP address: the proxy’s address is counted, not the words', async () => {
    const server = await startTestServer({
      env: { SIS_TRUSTED_PROXIES: '127.0.0.1', SIS_AUTH_CODES_PER_ADDRESS_HOUR: '2', SIS_SMS_DEFAULT_REGION: 'SA' },
    });
    try {
      const phones = saudiMobiles(6, 34, '+9665000').map((p) => `+966${p}`);
      const forged = ['not-an-address-1', 'not-an-address-2', '203.0.113.5, not-an-address-3', '203.0.113.6:4711'];
      const statuses: number[] = [];
      for (const [i, address] of forged.entries())
        statuses.push((await authCode(server.url, phones[i]!, address)).status);
      assert.deepEqual(statuses, [200, 200, 500, 500], 'all four counted as the proxy (127.0.0.1), two an hour');
      assert.equal((await refusals(server.url)).get('address'), 2);
      // An address is still believed, and counted on its own.
      assert.equal((await authCode(server.url, phones[4]!, '203.0.113.5')).status, 200);
      assert.equal((await authCode(server.url, phones[5]!, '198.51.100.1, 203.0.113.5')).status, 200);
    } finally {
      await server.close();
    }
  });
});
