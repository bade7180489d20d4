/**
 * Issue 33 point 6 over HTTP: a client behind one IPv4 address counts once in the address layer
 * however its address reaches the service (IPv4, IPv4-mapped in either spelling, 6to4, NAT64),
 * and a native IPv6 client rotating through the /64s of its /48 is stopped by the /48's limit.
 * Issue 46 point 5: a trusted network (SIS_SMS_TRUSTED_ADDRESSES) is believed through an IPv6
 * form that carries its IPv4 address only where SIS_SMS_TRUSTED_EMBEDDED names that form
 * (IPv4-mapped always), NAT64 read as SIS_CLIENT_NAT64_PREFIXES says.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { authCode, backends, midHour, saudiMobiles, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const SPELLINGS = [
  '198.51.100.9',
  '::ffff:198.51.100.9',
  '::ffff:c633:6409',
  '0:0:0:0:0:FFFF:C633:6409',
  '2002:c633:6409::1',
  '2002:c633:6409:7::9',
  '64:ff9b::198.51.100.9',
  '64:ff9b::c633:6409',
];

for (const backend of backends.filter((b) => b.name !== 'PostgreSQL')) {
  describe(`client addresses on ${backend.name}`, { skip: backend.skip ?? false }, () => {
    it('counts one IPv4 client once whichever way its address is written, and an IPv6 /48 as one beside its /64s', async () => {
      const { env } = await backend.fresh();
      const server = await startTestServer({
        env: {
          ...SMS_DEFAULTS,
          ...env,
          SIS_AUTH_CODES_PER_ADDRESS_HOUR: '5',
          SIS_AUTH_CODES_PER_IPV6_48_HOUR: '12',
        },
        now: midHour(),
      });
      try {
        const mobiles = saudiMobiles(60, 33, '+96650123');
        const byIpv4: number[] = [];
        for (const [i, address] of SPELLINGS.entries())
          byIpv4.push((await authCode(server.url, `0${mobiles[i]!}`, address)).status);
        assert.deepEqual(byIpv4, [200, 200, 200, 200, 200, 500, 500, 500], 'five for the one IPv4 client');
        // Twenty /64s of one /48, one code each: the /48's twelve.
        const bySite: number[] = [];
        for (let i = 0; i < 20; i++)
          bySite.push((await authCode(server.url, `0${mobiles[20 + i]!}`, `2001:db8:5:${i.toString(16)}::1`)).status);
        assert.equal(bySite.filter((s) => s === 200).length, 12);
        const refused = await authCode(server.url, `0${mobiles[45]!}`, '2001:db8:5:99::1');
        assert.match(refused.text, /^Too many codes asked from this address\./);
        assert.equal((await authCode(server.url, `0${mobiles[46]!}`, '2001:db8:6::1')).status, 200, 'another /48');
      } finally {
        await server.close();
      }
    });

    it('believes a trusted IPv4 network through another IPv6 form only where SIS_SMS_TRUSTED_EMBEDDED says', async () => {
      const { env } = await backend.fresh();
      const mobiles = saudiMobiles(40, 46, '+96650123');
      let next = 0;
      /** Two codes from each address, under `more` settings: the second is refused unless the address is trusted. */
      const twice = async (more: Record<string, string>, addresses: readonly string[]): Promise<number[]> => {
        const server = await startTestServer({
          env: {
            ...SMS_DEFAULTS,
            ...env,
            SIS_AUTH_CODES_PER_ADDRESS_HOUR: '1',
            SIS_SMS_TRUSTED_ADDRESSES: '198.51.100.0/24',
            ...more,
          },
          now: midHour(),
        });
        try {
          const statuses: number[] = [];
          for (const address of addresses)
            for (let i = 0; i < 2; i++)
              statuses.push((await authCode(server.url, `0${mobiles[next++]!}`, address)).status);
          return statuses;
        } finally {
          await server.close();
        }
      };
      // Each run's addresses are fresh to the counters (a fresh IPv4 client per run).
      assert.deepEqual(
        await twice({}, ['::ffff:198.51.100.1', '2002:c633:6402::1', '64:ff9b::c633:6403']),
        [200, 200, 200, 500, 200, 500],
        'by default IPv4-mapped only: a 6to4 relay or NAT64 translator is not the trusted network',
      );
      assert.deepEqual(
        await twice({ SIS_SMS_TRUSTED_EMBEDDED: '6to4' }, ['2002:c633:6404::1', '64:ff9b::c633:6405']),
        [200, 200, 200, 500],
        '6to4 named: 6to4 only',
      );
      assert.deepEqual(
        await twice({ SIS_SMS_TRUSTED_EMBEDDED: 'nat64', SIS_CLIENT_NAT64_PREFIXES: '64:ff9b:1::/48' }, [
          '64:ff9b:1:c633:64:600::',
          '2002:c633:6407::1',
        ]),
        [200, 200, 200, 500],
        'nat64 named: the local-use prefix in its configured /48 layout (198.51.100.6)',
      );
    });
  });
}
