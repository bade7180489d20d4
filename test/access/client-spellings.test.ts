/**
 * One notion of a client (docs/security.md, "What a client is"; issue 41 point 1), through
 * X-Forwarded-For from a trusted proxy: every spelling and embedding of one IPv4 address is one
 * client to the rate limit (in memory and in Redis), to the access log's `client` and to
 * AuthCode's address limit; the addresses of one IPv6 /64 are one client, two /64s two.
 * test/access/client-sockets.test.ts holds the same with the addresses as the connections' own.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { logCollector } from '../helpers/log-collector.js';
import { rawRequest } from '../helpers/raw-http.js';
import { authCode, backends, midHour, saudiMobiles, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const TOKEN_GET = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';
const dataset = { devices: [{ id: '1', token: 'tok-1' }] };

/** Each embedding: its own IPv4 client, then three more ways of writing it. */
const CLIENTS: Readonly<Record<string, readonly string[]>> = {
  'IPv4-mapped': ['198.51.100.1', '::FFFF:198.51.100.1', '::ffff:c633:6401', '0:0:0:0:0:ffff:198.51.100.1'],
  'IPv4-translated': ['198.51.100.2', '::ffff:0:198.51.100.2', '::FFFF:0:C633:6402', '0:0:0:0:ffff:0:c633:6402'],
  'IPv4-compatible': ['198.51.100.3', '::198.51.100.3', '::c633:6403', '0:0:0:0:0:0:c633:6403'],
  '6to4': ['198.51.100.4', '2002:c633:6404::1', '2002:c633:6404:7::9', '2002:C633:6404:FFFF::'],
  'NAT64 well-known': ['198.51.100.5', '64:ff9b::198.51.100.5', '64:ff9b::c633:6405', '0064:ff9b:0:0:0:0:c633:6405'],
  // Its /48 layout (RFC 6052), as NAT64 below configures.
  'NAT64 local-use': [
    '198.51.100.6',
    '64:ff9b:1:c633:64:600::',
    '64:FF9B:1:C633:0064:0600::',
    '0064:ff9b:0001:c633:0064:0600:0000:0000',
  ],
  Teredo: ['198.51.100.7', '2001:0:4136:e378:8000:63bf:39cc:9bf8', '2001::39cc:9bf8', '2001:0:5ef5:79fd:0:0:39CC:9BF8'],
};

/** The local-use NAT64 prefix's layout (SIS_CLIENT_NAT64_PREFIXES): the rows above are read by it. */
const NAT64 = { SIS_CLIENT_NAT64_PREFIXES: '64:ff9b:1::/48' };

/** Eight addresses of one /64 (written every which way), then one of the next /64. */
const ONE_64 = [
  '2001:db8:1:2::1',
  '2001:db8:1:2::2',
  '2001:db8:1:2:ffff:ffff:ffff:ffff',
  '2001:0DB8:0001:0002:0000:0000:0000:0003',
  '2001:db8:1:2:a:b:c:d',
  '2001:db8:1:2::198.51.100.1',
  '2001:db8:1:2:8000::',
  '2001:db8:1:2::1%eth0',
];
const NEXT_64 = '2001:db8:1:3::1';

/** Every address sent, in order, and what each counts as. */
const SENT = [...Object.values(CLIENTS).flat(), ...ONE_64, NEXT_64];
const COUNTED = [
  ...Object.values(CLIENTS).flatMap(([ipv4]) => Array<string>(4).fill(ipv4!)),
  ...ONE_64.map(() => '2001:db8:1:2::/64'),
  '2001:db8:1:3::/64',
];
/** With a limit of three: three of each client, none of its fourth spelling; five of the /64's eight refused. */
const ALLOWED = [
  ...Object.values(CLIENTS).flatMap(() => [true, true, true, false]),
  ...ONE_64.map((_, i) => i < 3),
  true,
];

const redisUrl = process.env['SIS_TEST_REDIS_URL'];
const limiters: readonly { name: string; env: Record<string, string>; skip: string | false }[] = [
  { name: 'in memory', env: {}, skip: false },
  {
    name: 'in Redis',
    env: { SIS_REDIS_URL: redisUrl ?? '' },
    skip:
      redisUrl === undefined ? 'set SIS_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run the Redis tests' : false,
  },
];

describe('one client however its address is written, forwarded by a trusted proxy', { timeout: 120_000 }, () => {
  for (const limiter of limiters)
    it(
      `the rate limit (${limiter.name}) and the access log count each client once`,
      { skip: limiter.skip },
      async () => {
        const log = logCollector();
        // A window of its own per run (about an hour), so Redis counts of earlier runs do not interfere.
        const window = `${3_600_000 + randomInt(1_000_000)}ms`;
        const server = await startTestServer({
          dataset,
          env: {
            SIS_RATE_LIMIT: `3/${window}`,
            SIS_TRUSTED_PROXIES: '127.0.0.1',
            LOG_LEVEL: 'info',
            ...NAT64,
            ...limiter.env,
          },
          logDestination: log.stream,
        });
        const statuses: number[] = [];
        try {
          for (const address of SENT)
            statuses.push(
              (
                await rawRequest(server.url, {
                  method: 'GET',
                  path: TOKEN_GET,
                  headers: [['X-Forwarded-For', address]],
                })
              ).status,
            );
        } finally {
          await server.close();
        }
        for (const [i, address] of SENT.entries())
          assert.equal(statuses[i], ALLOWED[i] ? 200 : 429, `${address} (counted as ${COUNTED[i]})`);
        const clients = log.lines.filter((l) => l['msg'] === 'request').map((l) => l['client']);
        assert.deepEqual(clients, COUNTED, 'the access log names the client each request was counted as');
      },
    );

  it('a prefix of 56 (SIS_CLIENT_IPV6_PREFIX) makes a site one client', async () => {
    const server = await startTestServer({
      dataset,
      env: { SIS_RATE_LIMIT: '3/1h', SIS_TRUSTED_PROXIES: '127.0.0.1', SIS_CLIENT_IPV6_PREFIX: '56' },
    });
    try {
      const statuses: number[] = [];
      for (const address of [
        '2001:db8:1:2::1',
        '2001:db8:1:3::1',
        '2001:db8:1:ff::1',
        '2001:db8:1:4::1',
        '2001:db8:1:100::1',
      ])
        statuses.push(
          (await rawRequest(server.url, { method: 'GET', path: TOKEN_GET, headers: [['X-Forwarded-For', address]] }))
            .status,
        );
      assert.deepEqual(
        statuses,
        [200, 200, 200, 429, 200],
        'four /64s of one /56 share its three; the next /56 has its own',
      );
    } finally {
      await server.close();
    }
  });

  for (const backend of backends.filter((b) => b.name !== 'PostgreSQL'))
    it(
      `AuthCode's address limit counts each client once (${backend.name})`,
      { skip: backend.skip ?? false },
      async () => {
        const { env } = await backend.fresh();
        const server = await startTestServer({
          env: { ...SMS_DEFAULTS, ...env, ...NAT64, SIS_AUTH_CODES_PER_ADDRESS_HOUR: '3' },
          now: midHour(),
        });
        const statuses: number[] = [];
        try {
          const mobiles = saudiMobiles(SENT.length, 41, '+96650123');
          for (const [i, address] of SENT.entries())
            statuses.push((await authCode(server.url, `0${mobiles[i]!}`, address)).status);
        } finally {
          await server.close();
        }
        for (const [i, address] of SENT.entries())
          assert.equal(statuses[i], ALLOWED[i] ? 200 : 500, `${address} (counted as ${COUNTED[i]})`);
      },
    );
});
